"""nngraph from Python against PyTorch (Debian's python3-torch and
python3-torchvision): .pt state dicts both ways with torch.save and
torch.load(weights_only=True), a model exported by torch.onnx.export, and a
torchvision resnet18 (random init, no
download) whose state_dict becomes an nngraph graph (from_zoo) with outputs
equal to torch's within 1e-4."""

import unittest

import support

np = support.require("numpy", "python3-numpy")
torch = support.require("torch", "python3-torch")
torchvision = support.require("torchvision", "python3-torchvision")
import nngraph  # noqa: E402

torch.set_num_threads(2)


class TorchTest(support.TempDirTestCase):
    def test_pt_written_by_nngraph_loads_in_torch(self):
        rng = np.random.default_rng(0)
        d = {"a.weight": rng.standard_normal((3, 4)).astype(np.float32),
             "a.bias": rng.standard_normal(3),  # float64
             "n": np.array(7, np.int64),
             "h": rng.standard_normal((2, 2)).astype(np.float16),
             "m": np.array([True, False])}
        nngraph.save_state_dict(self.path("a.pt"), d)
        back = torch.load(self.path("a.pt"), weights_only=True)
        self.assertEqual(list(back), list(d))
        for k, v in d.items():
            self.assertEqual(back[k].numpy().dtype, v.dtype, k)
            np.testing.assert_array_equal(back[k].numpy(), v, err_msg=k)

    def test_pt_written_by_torch_loads_in_nngraph(self):
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8))
        sd = net.state_dict()
        torch.save(sd, self.path("net.pt"))
        got = nngraph.load_state_dict(self.path("net.pt"))
        self.assertEqual(list(got), list(sd))
        for k, v in sd.items():
            np.testing.assert_array_equal(got[k], v.numpy(), err_msg=k)
        # A checkpoint: key_path picks the model's dict; other entries are skipped.
        torch.save({"model": sd, "epoch": 3}, self.path("ckpt.pt"))
        got = nngraph.load_state_dict(self.path("ckpt.pt"), key_path="model")
        self.assertEqual(list(got), list(sd))
        with self.assertRaisesRegex(nngraph.Error, "'optimizer'.*epoch|epoch.*'optimizer'"):
            nngraph.load_state_dict(self.path("ckpt.pt"), key_path="optimizer")

    def test_resnet18_state_dict_equals_torch(self):
        torch.manual_seed(0)
        net = torchvision.models.resnet18().eval()
        x = torch.randn(2, 3, 224, 224)
        with torch.no_grad():
            want = net(x).numpy()
        # The state_dict as it is (torch tensors) ...
        model = nngraph.from_zoo("resnet18", net.state_dict())
        self.assertEqual(model.inputs[0].shape, ["N", 3, 224, 224])
        (got,) = model.compile("cpu").run(None, {"x": x.numpy()})
        self.assertEqual(got.shape, (2, 1000))
        err = np.abs(got - want).max()
        self.assertLessEqual(err, 1e-4, f"max |nngraph - torch| = {err}")
        # ... and the same weights through a .pt file torch.save wrote.
        torch.save(net.state_dict(), self.path("resnet18.pt"))
        from_file = nngraph.from_zoo("resnet18", self.path("resnet18.pt"), batch=2)
        self.assertEqual(from_file.inputs[0].shape, [2, 3, 224, 224])
        sd = net.state_dict()
        graph_sd = from_file.state_dict()
        self.assertIn("layer1.0.conv1.weight", graph_sd)
        for k, v in graph_sd.items():
            np.testing.assert_array_equal(v, sd[k].numpy(), err_msg=k)

    def test_torch_onnx_export_runs_equal(self):
        torch.manual_seed(1)
        net = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 5)).eval()
        x = torch.randn(3, 3, 16, 16)
        torch.onnx.export(net, x, self.path("net.onnx"), input_names=["x"],
                          output_names=["y"], dynamic_axes={"x": {0: "N"}})
        with torch.no_grad():
            want = net(x).numpy()
        model = nngraph.load(self.path("net.onnx"))
        self.assertEqual(model.inputs[0].shape, ["N", 3, 16, 16])
        for pipeline in (None, "O2"):
            if pipeline:
                model.optimize(pipeline)
            (got,) = nngraph.InferenceSession(model).run(None, {"x": x.numpy()})
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)

    def test_from_zoo_errors(self):
        with self.assertRaisesRegex(nngraph.Error, "resnet18.*mobilenet_v2"):
            nngraph.from_zoo("resnet19")
        sd = torchvision.models.resnet18().state_dict()
        sd["fc.extra"] = sd.pop("fc.bias")
        with self.assertRaises(nngraph.Error) as e:
            nngraph.from_zoo("resnet18", sd)
        self.assertIn("fc.bias", str(e.exception))
        self.assertIn("fc.extra", str(e.exception))
        self.assertIn("state_dict keys", str(e.exception))
        # strict=False: the matching keys load, the rest keep their init.
        model = nngraph.from_zoo("resnet18", sd, strict=False)
        np.testing.assert_array_equal(model.state_dict()["conv1.weight"],
                                      sd["conv1.weight"].numpy())


if __name__ == "__main__":
    unittest.main(verbosity=2)
