"""One flag parser for every magic: the same flags, spellings and quoting in the line and
cell forms, read from each magic's own ``magic_arguments`` declaration, and ``%magic?`` help
generated from it.  Through a real InteractiveShell; expected jaxprs come from JAX itself."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import pytest
from IPython.core.error import UsageError

from workbench.ipython.args import parse_magic_line
from workbench.ipython.bench_magics import BenchMagics
from workbench.ipython.cache_magics import CacheMagics
from workbench.ipython.hlo_magics import HloMagics
from workbench.ipython.jaxpr_magics import JaxprMagics
from workbench.ipython.sharding_magics import ShardingMagics
from workbench.views.hlo import HLO_MIME

JAXPR = JaxprMagics.jaxpr
BENCH = BenchMagics.jaxbench

DEF_LOSS = "def loss(w, x):\n    return jnp.sum(jnp.tanh(x @ w) ** 2)\n"
W, X, XS = jnp.ones((4, 4)), jnp.ones((2, 4)), jnp.ones((3, 2, 4))
CALL = "loss(jnp.ones((4, 4)), jnp.ones((2, 4)))"
BATCHED_CALL = "loss(jnp.ones((4, 4)), jnp.ones((3, 2, 4)))"


# flags as typed -> (the same composition written with JAX, the call, its arguments)
TRANSFORM_FLAGS = [
    (
        '-t grad -t "vmap(in_axes=(None, 0))"',
        lambda f: jax.vmap(jax.grad(f), in_axes=(None, 0)),
        BATCHED_CALL,
        (W, XS),
    ),
    (
        "-t \"checkpoint(policy='dots_saveable')\"",
        lambda f: jax.checkpoint(f, policy=jax.checkpoint_policies.dots_saveable),
        CALL,
        (W, X),
    ),
    ('-t "value_and_grad(argnums=1)"', lambda f: jax.value_and_grad(f, argnums=1), CALL, (W, X)),
    ("-tgrad", jax.grad, CALL, (W, X)),
    ("--transform=grad", jax.grad, CALL, (W, X)),
    (
        "-t 'vmap(in_axes=(None, 0))'",
        lambda f: jax.vmap(f, in_axes=(None, 0)),
        BATCHED_CALL,
        (W, XS),
    ),
    (
        "--transform grad -t vmap(in_axes=(None, 0))",  # unquoted: brackets keep it one word
        lambda f: jax.vmap(jax.grad(f), in_axes=(None, 0)),
        BATCHED_CALL,
        (W, XS),
    ),
    (
        "-t checkpoint(policy='dots_saveable')",  # quotes inside brackets are Python's: kept
        lambda f: jax.checkpoint(f, policy=jax.checkpoint_policies.dots_saveable),
        CALL,
        (W, X),
    ),
]


def _form(magic: str, flags: str, call: str, form: str) -> str:
    if form == "cell":
        return f"%%{magic} {flags}\n{DEF_LOSS}{call}"
    return f"{DEF_LOSS}%{magic} {flags} {call}"


@pytest.mark.parametrize("form", ["cell", "line"])
@pytest.mark.parametrize(
    "flags,compose,call,args", TRANSFORM_FLAGS, ids=[t[0] for t in TRANSFORM_FLAGS]
)
def test_transform_flags_give_jaxs_own_jaxpr(run, shell, form, flags, compose, call, args):
    r = run(_form("jaxpr", flags, call, form))
    assert r.error is None, r.stdout
    expected = jax.make_jaxpr(compose(shell.user_ns["loss"]))(*args)
    assert r.bundle["text/plain"] == str(expected)


@pytest.mark.parametrize("form", ["cell", "line"])
@pytest.mark.parametrize(
    "flags,number,repeat,budget",
    [
        ("-n 5 -r 3", 5, 3, None),
        ("-n5 -r3", 5, 3, None),
        ("--budget=0.2", None, None, 0.2),
        # -r caps the run; a budget far above 2 x 3 calls, so no stall lowers -n
        ("--budget 2.5 -n 2 -r 3", 2, 3, 2.5),
    ],
)
def test_bench_flags(run, form, flags, number, repeat, budget):
    r = run(_form("jaxbench", f"-q --no-roofline {flags}", CALL, form))
    assert r.error is None, r.stdout
    res = r.result.result
    (m,) = res.measurements
    if number is not None:
        assert m.number == number and res.config.number == number
    if repeat is not None:
        assert len(m.samples) == repeat
    if budget is not None:
        assert res.config.budget_s == budget
    assert res.label == CALL


@pytest.mark.parametrize("form", ["cell", "line"])
def test_hlo_flags(run, shell, form):
    r = run(_form("hlo", "-t grad --stage lowered --no-fusion --backend cpu", CALL, form))
    assert r.error is None, r.stdout
    rec = r.bundle[HLO_MIME]
    assert rec["stage"] == "lowered" and rec["backend"] == "cpu" and rec["graphs"] == {}
    lowered = jax.jit(jax.grad(shell.user_ns["loss"])).lower(W, X).as_text()
    ops = re.findall(r"stablehlo\.\w+", r.bundle["text/plain"])
    assert ops and ops == re.findall(r"stablehlo\.\w+", lowered)
    r = run(_form("hlo", '--backend "cpu" --text', CALL, form))
    assert r.error is None and r.bundle["text/plain"].startswith("HloModule")


@pytest.mark.parametrize("form", ["cell", "line"])
def test_unknown_flag_and_missing_value_are_short_usage_errors(run, form):
    r = run(_form("jaxpr", "-t grad --nope", CALL, form))
    assert isinstance(r.error, UsageError)
    text = r.short_error()
    assert "unknown flag '--nope'" in text
    for a in JAXPR.parser._actions:  # the list comes from the declaration
        assert "/".join(a.option_strings) in text
    r = run(_form("hlo", "--stage", "", form).rstrip())
    assert isinstance(r.error, UsageError) and "--stage needs a value" in r.short_error()
    r = run(_form("jaxbench", "-n many", CALL, form))
    assert isinstance(r.error, UsageError)
    assert "-n needs an integer N, got 'many'" in r.short_error()


def test_sharding_flags(run, shell):
    shell.user_ns["arr_flags"] = jnp.arange(8.0)
    r = run("%sharding --text arr_flags")
    assert r.error is None and list(r.bundle) == ["text/plain"]
    r = run("%sharding -1 * arr_flags")  # an expression, not a flag
    assert r.error is None and "text/html" in r.bundle
    r = run("%sharding -x arr_flags")
    assert isinstance(r.error, UsageError) and "unknown flag '-x'" in str(r.error)
    assert "--text" in str(r.error)


def test_line_form_keeps_the_expression_as_typed():
    args, expr = parse_magic_line(JAXPR, "f(x,  \"a  'b'\", -1)", needs="a call")
    assert expr == "f(x,  \"a  'b'\", -1)" and args.transform == []
    args, expr = parse_magic_line(JAXPR, "-t grad  --depth=2 f(-x)  # note", needs="a call")
    assert args.transform == ["grad"] and args.depth == 2 and expr == "f(-x)  # note"
    args, expr = parse_magic_line(JAXPR, "-t vmap(in_axes=(None, 0)) -t grad g(y)", needs="a call")
    assert args.transform == ["vmap(in_axes=(None, 0))", "grad"] and expr == "g(y)"
    args, expr = parse_magic_line(BENCH, "-n -1 -r2 f(x)", needs="a call")  # a value, not a flag
    assert args.n == -1 and args.r == 2 and expr == "f(x)"
    args, expr = parse_magic_line(BENCH, "-q -- -f(x)", needs="a call")  # -- ends the flags
    assert args.quiet and expr == "-f(x)"
    with pytest.raises(UsageError, match="needs a call"):
        parse_magic_line(BENCH, "-n 3", needs="a call")


def test_quotes_are_removed_as_a_shell_would():
    line = (
        '-t "vmap(in_axes=(None, 0))" -t \'grad(argnums=1)\' -t"jvp" '
        '--static-argnames="a b" --static-argnums \\1'
    )
    args, expr = parse_magic_line(JAXPR, line)
    assert args.transform == ["vmap(in_axes=(None, 0))", "grad(argnums=1)", "jvp"]
    assert args.static_argnames == "a b" and args.static_argnums == "1" and expr == ""
    args, _ = parse_magic_line(JAXPR, r'-t "say(\"hi\")"')
    assert args.transform == ['say("hi")']
    with pytest.raises(UsageError, match="unclosed"):
        parse_magic_line(JAXPR, '-t "grad')


def test_brackets_keep_their_quotes_and_must_close():
    """Inside unquoted brackets the text is Python, not shell: quotes stay as typed."""
    args, _ = parse_magic_line(JAXPR, "-t checkpoint(policy='a b') -t f(\"x\", ')')")
    assert args.transform == ["checkpoint(policy='a b')", "f(\"x\", ')')"]
    with pytest.raises(UsageError, match=r"unclosed \("):  # not "needs a call"
        parse_magic_line(JAXPR, "-t vmap(in_axes=(None, 0) f(x)", needs="a call")
    with pytest.raises(UsageError, match="unclosed '"):
        parse_magic_line(JAXPR, "-t g('x)")


def test_a_flag_is_not_taken_as_the_value_of_the_flag_before_it():
    with pytest.raises(UsageError, match="^-t needs a value"):
        parse_magic_line(JAXPR, "-t --text f(x)", needs="a call")
    with pytest.raises(UsageError, match="^-n needs a value"):
        parse_magic_line(BENCH, "-n -q", needs=None)
    args, _ = parse_magic_line(BENCH, "-n -1 f(x)", needs="a call")  # a value, not a flag
    assert args.n == -1


def test_attached_values_and_bad_values(capsys):
    args, _ = parse_magic_line(BENCH, "-n100 -r=7 --budget=0.5 --precision 0 --text")
    assert (args.n, args.r, args.budget, args.precision, args.text) == (100, 7, 0.5, 0.0, True)
    with pytest.raises(UsageError, match="unknown flag '-qx'"):
        parse_magic_line(BENCH, "-qx")  # -q takes no value, so -qx is not -q x
    with pytest.raises(UsageError, match="unknown flag '--bud'"):
        parse_magic_line(BENCH, "--bud 1")  # no abbreviations: what the help lists is what works
    with pytest.raises(UsageError, match="ignored explicit argument"):
        parse_magic_line(BENCH, "--text=yes")
    with pytest.raises(UsageError, match=r"unrecognized arguments: grad\nusage: %jaxpr"):
        parse_magic_line(JAXPR, "grad")  # a cell line of words that are not flags
    with pytest.raises(UsageError, match="-t needs a value"):
        parse_magic_line(JAXPR, "-t   ")
    assert capsys.readouterr() == ("", "")  # argparse never printed, never exited


def test_jaxcache_and_workbench_arguments():
    jc, wb = CacheMagics.jaxcache, CacheMagics.workbench
    args, _ = parse_magic_line(jc, "persist '/tmp/a dir' --min-compile-time 0 --min-entry-size=5")
    assert (args.command, args.directory, args.min_compile_time, args.min_entry_size) == (
        "persist",
        "/tmp/a dir",
        0.0,
        5,
    )
    args, _ = parse_magic_line(jc, "persist --min-compile-time 1.5 /tmp/d")  # flags anywhere
    assert (args.directory, args.min_compile_time) == ("/tmp/d", 1.5)
    args, _ = parse_magic_line(jc, "persist -- -odd-dir")
    assert args.directory == "-odd-dir"
    args, _ = parse_magic_line(wb, "timings off")
    assert (args.setting, args.state) == ("timings", "off")
    with pytest.raises(UsageError, match="invalid choice: 'maybe'"):
        parse_magic_line(wb, "timings maybe")
    with pytest.raises(UsageError, match="unknown flag '-x'; %workbench takes no flags"):
        parse_magic_line(wb, "timings -x")


def test_jaxcache_misuse_is_short(run, tmp_path):
    for line in (
        "%jaxcache clear now",
        "%jaxcache --min-compile-time 0",
        "%jaxcache persist off --min-entry-size 1",
        "%jaxcache persist --min-entry-size 1",
        f"%jaxcache persist {tmp_path} --min-entry-size lots",
        "%jaxcache persist -x",
    ):
        r = run(line)
        assert isinstance(r.error, UsageError), line
        assert len(str(r.error).splitlines()) <= 2, str(r.error)
    for line in ("%jaxcache clear extra", "%jaxcache clear --min-compile-time 1"):
        msg = str(run(line).error)  # "extra" is not a directory: clear takes nothing
        assert msg.startswith("%jaxcache clear takes nothing more"), msg


MAGICS = [
    ("line", "jaxpr", JaxprMagics),
    ("cell", "jaxpr", JaxprMagics),
    ("line", "hlo", HloMagics),
    ("cell", "hlo", HloMagics),
    ("line", "jaxbench", BenchMagics),
    ("cell", "jaxbench", BenchMagics),
    ("line", "sharding", ShardingMagics),
    ("line", "jaxcache", CacheMagics),
    ("line", "workbench", CacheMagics),
]


@pytest.mark.parametrize("kind,name,cls", MAGICS, ids=[f"{k}-{n}" for k, n, _ in MAGICS])
def test_every_magic_declares_its_flags_once(shell, kind, name, cls):
    registered = shell.magics_manager.magics[kind][name]
    assert isinstance(registered.__self__, cls)
    parser = registered.parser  # built by @magic_arguments from the declaration
    assert registered.__doc__ == parser.format_help()  # the help is generated from it


@pytest.mark.parametrize(
    "query", ["%jaxpr?", "%%hlo?", "%jaxbench?", "%jaxcache?", "%sharding?", "%workbench?"]
)
def test_question_mark_prints_help_from_the_declaration(run, shell, query):
    kind = "cell" if query.startswith("%%") else "line"
    parser = shell.magics_manager.magics[kind][query.strip("%?")].parser
    r = run(query)
    assert r.error is None
    out = re.sub(r"\x1b\[[0-9;]*m", "", r.stdout)
    assert parser.format_help().strip() in out
    for a in parser._actions:
        for s in a.option_strings:
            assert s in out
        assert (a.help or "").split()[0] in out


EXPRESSION_MAGICS = ["%jaxpr", "%hlo", "%jaxbench -q -n 1 -r 1", "%sharding"]


@pytest.mark.parametrize("magic", EXPRESSION_MAGICS)
def test_the_expression_is_not_var_expanded(run, shell, magic):
    """IPython would replace ``{k}`` (a set literal here) by the value of ``k``, as it does
    for ``%ls {d}``; like ``%timeit``, these magics take Python, so it reaches them as typed."""
    shell.user_ns.update(k_set="not_a_name", fvx=lambda x, n: x * n, xvx=jnp.ones(3))
    call = "fvx(xvx, len({k_set}))" if magic != "%sharding" else "[xvx][len({k_set}) - 1]"
    r = run(f"{magic} {call}")
    assert r.error is None, r.stdout
    if magic.startswith("%jaxbench"):
        assert r.result.result.label == call
