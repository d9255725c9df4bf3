"""Tests of the digits ViT's image and video position variants (posenc._vit_rotary, TinyViT) and
of the vit-images study (posenc.experiments.vit_images)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from posenc._vit_rotary import axial_frequencies, normalised_rotary
from posenc.experiments import vit_images
from posenc.rope_images import apply_dinov3_rope, patch_center_coordinates
from posenc.rope_video import axes_frequencies
from posenc.tiny_vit import TinyViT


def _pair(model_kwargs: dict, seed: int = 0) -> TinyViT:
    torch.manual_seed(seed)
    return TinyViT(8, 2, 10, 32, 2, 1, **model_kwargs).eval()


@pytest.mark.parametrize("extension", ["ntk", "riflex"])
def test_test_time_changes_touch_only_larger_grids(extension):
    plain, changed = _pair({"position": "rope"}), _pair({"position": "rope", "rope_extension": extension})
    images = torch.rand(3, 1, 16, 16)
    with torch.no_grad():
        assert torch.equal(plain(images[..., :8, :8]), changed(images[..., :8, :8]))
        assert not torch.allclose(plain(images), changed(images))


def test_axial_frequencies_change_each_longer_axis_by_its_rule():
    plain = axes_frequencies((8,), base=100.0)
    ntk = axial_frequencies(16, 100.0, (4, 4), (8, 4), "ntk")
    assert torch.equal(ntk[4:], plain)  # the column did not grow
    assert float(ntk[0]) == 1.0 and float(plain[-1] / ntk[3]) == pytest.approx(2.0)  # slowest pair twice slower
    riflex = axial_frequencies(16, 100.0, (4, 4), (4, 8), "riflex")
    assert torch.equal(riflex[:4], plain)
    periods = 2 * math.pi / plain
    nearest = int((periods - 4).abs().argmin())  # the pair whose period is closest to the trained side
    assert 2 * math.pi / float(riflex[4 + nearest]) == pytest.approx(8 / 0.9)
    assert torch.equal(torch.cat((riflex[4:4 + nearest], riflex[5 + nearest:])),
                       torch.cat((plain[:nearest], plain[nearest + 1:])))


def test_normalised_rotary_is_dinov3s_rope():
    q, k = torch.randn(2, 1, 2, 12, 16, dtype=torch.float64).unbind(0)
    rotary = normalised_rotary(3, 4, head_dim=16, base=100.0, training=False, jitter=None, rescale=2.0,
                               device=torch.device("cpu"))
    rq, rk = rotary(q, k)
    coords = patch_center_coordinates(3, 4)
    torch.testing.assert_close(rq, apply_dinov3_rope(q, coords), rtol=0, atol=1e-12)
    torch.testing.assert_close(rk, apply_dinov3_rope(k, coords), rtol=0, atol=1e-12)


def test_dinov3_draws_only_in_training():
    model = _pair({"position": "rope-normalized", "coordinate_rescale": 2.0})
    images = torch.rand(2, 1, 8, 8)
    with torch.no_grad():
        assert torch.equal(model(images), model(images))  # eval: the computed coordinates
        model.train()
        torch.manual_seed(1)
        first = model(images)
        torch.manual_seed(2)
        assert not torch.allclose(first, model(images))  # each training call draws a new scale


def test_rope_mixed_vit_learns_its_frequencies_and_defaults_to_base_10():
    model = _pair({"position": "rope-mixed"})
    assert model.rope_base == 10.0 and len(model.mixed) == 1
    model.train()
    loss = model(torch.rand(4, 1, 8, 8)).logsumexp(-1).sum()
    loss.backward()
    assert model.mixed[0].frequencies.grad is not None and float(model.mixed[0].frequencies.grad.abs().sum()) > 0


@pytest.mark.parametrize("kwargs, name", [({"position": "rope", "rope_extension": "yarn"}, "rope_extension"),
                                          ({"position": "rope-normalized", "coordinate_rescale": 0.5},
                                           "coordinate_rescale"),
                                          ({"position": "rope", "rope_base": 1.0}, "rope_base")])
def test_bad_settings_are_named(kwargs, name):
    with pytest.raises(ValueError, match=name):
        TinyViT(8, 2, 10, 32, 2, 1, **kwargs)


def test_tiny_configuration_end_to_end(tmp_path: Path):
    results = vit_images.run(vit_images.CONFIGS["tiny"], workers=1)
    assert list(results["methods"]) == list(vit_images.METHODS)
    rope = results["methods"]["rope"]["accuracy"]
    for variant in ("rope-rescaled", "rope-ntk", "rope-riflex"):  # the same trained model at its own grid
        assert results["methods"][variant]["accuracy"][0] == rope[0]
    assert vit_images.summary_lines(results)[0].startswith("method")


def test_committed_results_are_the_full_configuration():
    results = vit_images.load_results()
    config = vit_images.CONFIGS["full"]
    assert results["experiment"] == "vit_images" and results["config"] == config.as_dict()
    assert results["data"]["train_images"] + results["data"]["test_images"] == 1797
    assert list(results["methods"]) == list(vit_images.METHODS) and results["grids"] == [4, 6, 8]
    for entry in results["methods"].values():
        for mean, per_seed in zip(entry["mean"], entry["accuracy"]):
            assert len(per_seed) == len(config.seeds)
            assert mean == pytest.approx(sum(per_seed) / len(per_seed), abs=1e-4)
    rope = results["methods"]["rope"]["accuracy"][0]
    for variant in ("rope-rescaled", "rope-ntk", "rope-riflex"):  # the same trained models at the trained grid
        assert results["methods"][variant]["accuracy"][0] == rope
    assert {"torch", "scikit-learn"} <= set(results["versions"])
