"""No rule-set name is compared as a string outside the registry: what differs is a method or a TOML switch."""

import ast
from pathlib import Path

from firmware.rules.names import RULE_NAMES

ROOT = Path(__file__).resolve().parents[3]
# The registry: the names and the family that plays each (names.py), and the lookup (registry.py).
REGISTRY = (ROOT / "firmware" / "rules" / "names.py", ROOT / "firmware" / "rules" / "registry.py")


def _names_in(node: ast.AST) -> list[str]:
    """Rule-set names written as string constants in ``node`` (a tuple or list of them included)."""
    if isinstance(node, ast.Constant) and node.value in RULE_NAMES:
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [n for elt in node.elts for n in _names_in(elt)]
    return []


def _offences(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out = []
    for node in ast.walk(tree):
        found: list[str] = []
        if isinstance(node, ast.Compare):
            for part in [node.left, *node.comparators]:
                found += _names_in(part)
        elif isinstance(node, ast.Dict):
            found += [n for key in node.keys if key is not None for n in _names_in(key)]
        elif isinstance(node, ast.MatchValue):
            found += _names_in(node.value)
        if found:
            out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {', '.join(found)}")
    return out


def test_no_rule_set_name_is_compared_outside_the_registry():
    files = [p for folder in ("firmware", "sim", "hal") for p in (ROOT / folder).rglob("*.py") if p not in REGISTRY]
    assert len(files) > 100
    offences = [o for p in files for o in _offences(p)]
    assert offences == [], "rule-set names compared as strings:\n" + "\n".join(offences)


def test_the_check_finds_what_it_looks_for(tmp_path):
    planted = tmp_path / "x.py"
    planted.write_text('if rules.name == "competition":\n    pass\nchips = {"mcr": 500}\n'
                       'several = name in ("liaoning", "jinzhou")\n', encoding="utf-8")
    from tests.firmware.rules import test_rule_names

    old = test_rule_names.ROOT
    test_rule_names.ROOT = tmp_path
    try:
        assert len(_offences(planted)) == 3
    finally:
        test_rule_names.ROOT = old
