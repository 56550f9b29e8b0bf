"""Core: batched models and batched GD equal per-network autograd GD; exact hidden-space GD."""
import pytest
import torch
import torch.nn.functional as F

from theory import data
from theory.device import draw
from theory.sim import losses, models, train

DT = torch.float64


def _data(gen, n=12, d=7, labels="pm"):
    X = data.unit_sphere(n, d, generator=gen)
    y = data.balanced_labels(n, zero_one=(labels == "01"))
    return X, y


def _per_network_gd(loss_fn, params, steps, lr):
    """Plain autograd GD on one network's parameters (no ensemble axis)."""
    ps = [p.clone().requires_grad_(True) for p in params]
    for _ in range(steps):
        gs = torch.autograd.grad(loss_fn(ps), ps)
        with torch.no_grad():
            for p, g in zip(ps, gs):
                p -= lr * g
    return [p.detach() for p in ps]


def test_two_layer_batched_gd_equals_per_network(ctx):
    g = ctx.generator("core/gd", "two-layer")
    X, y = _data(g, labels="01")
    net = models.TwoLayerNet.init(5, 16, 7, q=0.1, act="relu", generator=g)
    W0, a = net.W.clone(), net.a.clone()
    lr = torch.tensor([0.5, 1.0, 1.5, 2.0, 2.5], dtype=DT)
    train.gd(net, X, y, loss="bce", lr=lr, steps=30)
    for e in range(5):
        def L(ps, e=e):
            u = (F.relu(X @ ps[0].T) * a[e]).sum(-1)
            return F.binary_cross_entropy_with_logits(u, y)
        (We,) = _per_network_gd(L, [W0[e]], 30, float(lr[e]))
        torch.testing.assert_close(net.W[e], We, rtol=0, atol=1e-13)


def test_two_class_batched_gd_equals_per_network(ctx):
    g = ctx.generator("core/gd", "two-class")
    X, y = _data(g)
    net = models.TwoClassNet.init(4, 6, 7, sigma0=0.1, act="leaky_relu", gamma=0.2, generator=g)
    W0 = net.W.clone()
    train.gd(net, X, y, loss="logistic", lr=0.8, steps=40)
    for e in range(4):
        def L(ps):
            F_ = F.leaky_relu(ps[0] @ X.T, 0.2).mean(1)  # (2, N)
            return F.softplus(-y * (F_[0] - F_[1])).mean()
        (We,) = _per_network_gd(L, [W0[e]], 40, 0.8)
        torch.testing.assert_close(net.W[e], We, rtol=0, atol=1e-13)


def test_deep_mlp_batched_gd_equals_per_network(ctx):
    g = ctx.generator("core/gd", "deep")
    X = data.unit_sphere(10, 5, generator=g)
    Y = draw(torch.randn, 10, 3, generator=g, dtype=DT, device=ctx.device)
    net = models.DeepMLP.init(3, [5, 8, 8, 3], stds="he", alpha=0.7, generator=g)
    W0 = [w.clone() for w in net.weights]
    train.gd(net, X, Y, loss="squared", lr=0.05, steps=25, layer_lr=[1.0, 0.5, 2.0])
    for e in range(3):
        def L(ps):
            h = F.relu(X @ ps[0].T)
            h = F.relu(h @ ps[1].T)
            return (0.5 * ((0.7 * h @ ps[2].T - Y) ** 2).sum(-1)).mean()
        ps = [w[e].clone().requires_grad_(True) for w in W0]
        for _ in range(25):
            gs = torch.autograd.grad(L(ps), ps)
            with torch.no_grad():
                for p, gr, k in zip(ps, gs, [1.0, 0.5, 2.0]):
                    p -= 0.05 * k * gr
        for l in range(3):
            torch.testing.assert_close(net.weights[l][e], ps[l].detach(), rtol=0, atol=1e-13)


def test_ntk_parameterisation_same_function_at_init(ctx):
    g1, g2 = ctx.generator("core/ntk"), ctx.generator("core/ntk")
    X = data.unit_sphere(6, 4, generator=ctx.generator("core/ntk", "x"))
    he = models.DeepMLP.init(2, [4, 9, 9, 1], stds="he", generator=g1)
    ntk = models.DeepMLP.init(2, [4, 9, 9, 1], stds="he", ntk=True, generator=g2)
    torch.testing.assert_close(he(X), ntk(X), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("act", ["relu", "leaky_relu"])
def test_hidden_space_gd_equals_weight_space_gd(ctx, act):
    """gd_hidden (W = W0 + C X, Z updated with the Gram matrix) reproduces gd to rounding."""
    g = ctx.generator("core/gd_hidden", act)
    X, y = _data(g, n=8, d=30)
    kw = dict(gamma=0.1) if act == "leaky_relu" else {}
    a = models.TwoClassNet.init(3, 10, 30, sigma0=0.05, act=act, generator=g, **kw)
    b = models.TwoClassNet(a.W.clone(), a.act)
    ta = train.gd(a, X, y, loss="logistic", lr=2.0, steps=300)
    tb, st = train.gd_hidden(b, X, y, loss="logistic", lr=2.0, steps=300)
    scale = (a.W - st.W0.reshape(a.W.shape)).abs().max()
    assert float((a.W - b.W).abs().max() / scale) < 1e-12
    torch.testing.assert_close(ta.loss_tensor(), tb.loss_tensor(), rtol=1e-12, atol=0)
    # and for Wang's two-layer net
    n1 = models.TwoLayerNet.init(2, 12, 30, act="relu", generator=g)
    n2 = models.TwoLayerNet(n1.W.clone(), n1.a.clone(), n1.act)
    y01 = (y > 0).to(DT)
    train.gd(n1, X, y01, loss="bce", lr=1.0, steps=100)
    train.gd_hidden(n2, X, y01, loss="bce", lr=1.0, steps=100)
    torch.testing.assert_close(n1.W, n2.W, rtol=0, atol=1e-13)


def test_hidden_space_gd_every_step_hook(ctx):
    """``every`` sees every step 0..T once, with the outputs of that step's weights (the recorded steps' losses
    agree), and stores nothing: the trajectory holds only ``record``."""
    g = ctx.generator("core/gd_hidden", "every")
    X, y = _data(g, n=8, d=30)
    net = models.TwoClassNet.init(2, 10, 30, sigma0=0.05, act="relu", generator=g)
    seen = {}
    tr, _ = train.gd_hidden(net, X, y, loss="logistic", lr=2.0, steps=50, record=[0, 10, 50],
                            every=lambda t, st, u: seen.__setitem__(t, losses.loss("logistic", u, y)))
    assert sorted(seen) == list(range(51)) and tr.steps == [0, 10, 50]
    for k, t in enumerate(tr.steps):
        torch.testing.assert_close(seen[t], tr.loss[k], rtol=0, atol=0)


def test_hidden_space_gd_per_member_data_and_slopes(ctx):
    """gd_hidden with one data set (X_e, y_e) and one leaky slope γ_e per member (seeds × slopes on the
    ensemble axis) equals separate single-member runs, and autograd GD on the same batched model."""
    from theory.sim import activations

    g = ctx.generator("core/gd_hidden", "per-member")
    gammas = [0.0, 0.1, 0.5, 0.0, 0.25, 0.75]
    E, n, d, m = len(gammas), 8, 30, 10
    X = torch.stack([_data(g, n=n, d=d)[0] for _ in range(E)])
    y = torch.stack([data.balanced_labels(n)[torch.randperm(n, generator=g, device=g.device).cpu()] for _ in range(E)])
    W0 = 0.05 * draw(torch.randn, E, 2, m, d, generator=g, dtype=DT, device=ctx.device)
    batched = models.TwoClassNet(W0.clone(), activations.member_slopes(gammas))
    tb, _ = train.gd_hidden(batched, X, y, loss="logistic", lr=2.0, steps=200)
    auto = models.TwoClassNet(W0.clone(), activations.member_slopes(gammas))
    ta = train.gd(auto, X, y, loss="logistic", lr=2.0, steps=200)
    scale = (batched.W - W0).abs().max()
    assert float((auto.W - batched.W).abs().max() / scale) < 1e-12
    torch.testing.assert_close(ta.loss_tensor(), tb.loss_tensor(), rtol=1e-12, atol=0)
    for e, gam in enumerate(gammas):
        act = activations.get("relu") if gam == 0 else activations.get("leaky_relu", gamma=gam)
        one = models.TwoClassNet(W0[e:e + 1].clone(), act)
        t1, _ = train.gd_hidden(one, X[e], y[e], loss="logistic", lr=2.0, steps=200)
        assert float((one.W[0] - batched.W[e]).abs().max() / scale) < 1e-12, e
        torch.testing.assert_close(t1.loss_tensor()[:, 0], tb.loss_tensor()[:, e], rtol=1e-12, atol=0)


def test_per_member_inputs_and_slopes_reject_bad_shapes(ctx):
    from theory.sim import activations

    net = models.TwoClassNet(torch.zeros(3, 2, 4, 5, dtype=DT), activations.member_slopes([0.0, 0.1, 0.2]))
    with pytest.raises(ValueError, match=r"\(3, N, 5\)"):
        train.gd_hidden(net, torch.zeros(2, 6, 5, dtype=DT), torch.ones(6, dtype=DT), loss="logistic", lr=0.1, steps=1)
    with pytest.raises(ValueError, match="labels y"):
        train.gd_hidden(net, torch.zeros(6, 5, dtype=DT), torch.ones(2, 6, dtype=DT), loss="logistic", lr=0.1, steps=1)
    with pytest.raises(ValueError, match="ensemble axis E = 3"):
        net.act(torch.zeros(2, 4))
    for bad in ([], [0.1, 1.0], [-0.1], [[0.1]], [float("nan")]):
        with pytest.raises(ValueError, match="member_slopes|member slopes"):
            activations.member_slopes(bad)


def test_trajectory_records_on_geometric_grid(ctx):
    g = ctx.generator("core/grid")
    X, y = _data(g)
    net = models.TwoClassNet.init(2, 4, 7, sigma0=0.1, act="relu", generator=g)
    tr = train.gd(net, X, y, loss="logistic", lr=0.5, steps=100,
                  observe=lambda t, ps, u: {"norm": ps[0].norm(dim=-1)})
    assert tr.steps == train.geometric_grid(100)
    assert tr.stacked("norm").shape == (len(tr.steps), 2, 2, 4)
    assert bool((tr.loss_tensor()[1:] <= tr.loss_tensor()[:-1] + 1e-15).all())  # small-step GD descends


def test_gradient_flow_matches_closed_form(ctx):
    """θ̇ = −∇(½ θᵀAθ) has θ(t) = exp(−tA)θ(0)."""
    A = torch.diag(torch.tensor([0.5, 1.0, 2.0], dtype=DT))
    th0 = torch.tensor([[1.0, -2.0, 0.5]], dtype=DT)
    t = [0.0, 0.5, 1.0, 2.0]
    ts, (traj,), _ = train.gradient_flow(lambda ps: 0.5 * (ps[0] @ A * ps[0]).sum(-1), [th0], t)
    want = torch.stack([th0[0] * torch.exp(-s * A.diagonal()) for s in ts])
    torch.testing.assert_close(traj[:, 0], want, rtol=1e-9, atol=1e-11)


def test_cross_entropy_loss_and_derivative(ctx):
    """losses 'cross_entropy' = torch's F.cross_entropy per member; derivative = softmax − one-hot (= N·∇)."""
    g = ctx.generator("core/losses", "ce")
    u = draw(torch.randn, 3, 7, 4, generator=g, dtype=ctx.dtype, device=ctx.device).requires_grad_(True)
    y = draw(torch.randint, 0, 4, (7,), generator=g, device=ctx.device)
    L = losses.loss("cross_entropy", u, y)
    ref = torch.stack([F.cross_entropy(u[e], y) for e in range(3)])
    assert torch.allclose(L, ref, rtol=0, atol=1e-14)
    (gu,) = torch.autograd.grad(L.sum() * 7, u)
    assert torch.allclose(gu, losses.derivative("cross_entropy", u.detach(), y), rtol=0, atol=1e-14)
    with pytest.raises(ValueError, match="class indices"):
        losses.loss("cross_entropy", u, torch.full((7,), 4))


@pytest.mark.parametrize("opt", ["adam", "sgd"])
def test_batched_minibatch_equals_per_network(ctx, opt):
    """Minibatch Adam / SGD over an ensemble = the same run on each member alone (shared batch order)."""
    g = ctx.generator("core/adam", "equal")
    X = draw(torch.randn, 30, 6, generator=g, dtype=ctx.dtype, device=ctx.device)
    y = draw(torch.randint, 0, 3, (30,), generator=g, device=ctx.device)
    net = models.DeepMLP.init(3, [6, 8, 3], generator=g)
    ws0 = [w.clone() for w in net.weights]
    run = getattr(train, opt)
    run(net, X, y, loss="cross_entropy", lr=1e-2, epochs=5, batch=7, generator=torch.Generator().manual_seed(1))
    for e in range(3):
        one = models.DeepMLP([w[e:e + 1].clone() for w in ws0], net.act, net.alpha)
        run(one, X, y, loss="cross_entropy", lr=1e-2, epochs=5, batch=7, generator=torch.Generator().manual_seed(1))
        for a, b in zip(one.weights, net.weights):
            assert torch.allclose(a[0], b[e], rtol=0, atol=1e-12)
    assert not torch.allclose(net.weights[0], ws0[0])  # it moved
    with pytest.raises(ValueError, match="unknown optimizer"):
        train.minibatch(net, X, y, optimizer="lbfgs", loss="cross_entropy", lr=1e-2, epochs=1, batch=7)
