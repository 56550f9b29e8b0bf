"""Core (issue 33): the step benchmark times the Kou engine (``train.gd_hidden``) eager, and replaying its captured
step where CUDA is present; the switch it flips for that (``$THEORY_CUDA_GRAPHS``) is left as it found it."""
import math
import os

import torch

from theory import bench


def test_gd_hidden_timing_is_finite_and_leaves_the_switch(monkeypatch):
    monkeypatch.setenv("THEORY_CUDA_GRAPHS", "0")
    us = bench._time_gd_hidden(torch.device("cpu"), 2, 10, graphs=True, reps=1)
    assert math.isfinite(us) and us > 0
    assert os.environ["THEORY_CUDA_GRAPHS"] == "0"
    monkeypatch.delenv("THEORY_CUDA_GRAPHS")
    bench._time_gd_hidden(torch.device("cpu"), 1, 10, graphs=False, reps=1)
    assert "THEORY_CUDA_GRAPHS" not in os.environ
