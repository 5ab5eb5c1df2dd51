// TEMPORARY stub.
#include "nngraph/ir/Parser.h"
#include "nngraph/runtime/Error.h"
namespace nng::ir {
std::unique_ptr<Graph> parseGraph(std::string_view, std::string_view, const ParseOptions &) { fail(ErrorKind::Unsupported, "parser"); }
std::unique_ptr<Graph> parseGraphFile(const std::string &, const ParseOptions &) { fail(ErrorKind::Unsupported, "parser"); }
}
