def test_ctx(ctx):
    assert ctx.profile in ("quick", "full")
