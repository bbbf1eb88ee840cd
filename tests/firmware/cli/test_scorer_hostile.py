"""``mjtable score`` against hostile input: one strict-JSON answer per line, no crash, hang or misleading answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
DATA = Path(__file__).parents[2] / "data"
CHICKEN = {"id": "c", "rules": "mcr", "hand": "56s678pWW", "win_tile": "7s", "seat_wind": "S", "round_wind": "E",
           "melds": [{"kind": "chow", "tiles": "123m", "from": "left"},
                     {"kind": "chow", "tiles": "345m", "from": "left"}]}
COMPETITION = {"id": "k", "rules": "competition", "hand": "123345678mN", "win_tile": "N", "seat_wind": "E",
               "round_wind": "E", "flowers": 2, "melds": [{"kind": "pung", "tiles": "EEE", "from": "left"}],
               "discarder": "W"}
GOOD = json.dumps(CHICKEN).encode()
README_EXAMPLE = b"""    {"id": "h1", "rules": "mcr", "hand": "56s678pWW", "win_tile": "7s",
     "melds": [{"kind": "chow", "tiles": "123m", "from": "left"},
               {"kind": "pung", "tiles": "EEE", "from": "opposite"}],
     "self_drawn": false, "last_of_kind": false, "kong_win": false, "last_tile": false,
     "seat_wind": "S", "round_wind": "E", "flowers": 0, "discarder": "E"}
"""


def _strict(text: str) -> Any:
    """``json.loads`` that refuses NaN and Infinity (strict JSON)."""
    def refuse(name: str) -> Any:
        raise ValueError(f"not strict JSON: {name}")
    return json.loads(text, parse_constant=refuse)


def _score(tmp_path: Path, data: bytes, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict]]:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(data)
    status = main(["score", str(path)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return status, [_strict(line) for line in captured.out.splitlines()]


def _around(bad: bytes) -> bytes:
    """A hostile line between two good cases."""
    return GOOD + b"\n" + bad + b"\n" + GOOD + b"\n"


def _check_around(status: int, answers: list[dict], words: str) -> dict:
    assert len(answers) == 3, answers
    assert answers[0]["total"] == 8 and answers[2]["total"] == 8
    assert "error" in answers[1] and words in answers[1]["error"], answers[1]
    return answers[1]


# -- one bad line does not stop the stream -----------------------------------------------------------------------

def test_a_bad_line_does_not_lose_the_lines_after_it(tmp_path, capsys):
    status, answers = _score(tmp_path, _around(b"{not json") + _around(b'{"id": 3, "hand": 7}'), capsys)
    assert len(answers) == 6 and [a.get("total") for a in answers] == [8, None, 8, 8, None, 8]
    assert answers[4] == {"id": 3, "error": answers[4]["error"]} and "'hand'" in answers[4]["error"]
    assert status == 1                  # a line that is not JSON


@pytest.mark.parametrize("bad", [b"[" * 60_000, b'{"a":' * 13_000, b'{"id": 9, "melds": ' + b"[" * 5000,
                                 b'{"id": 9, "x": "' + b"[" * 5000 + b'", "y": ' + b"[" * 33 + b"]" * 33 + b"}"])
def test_deep_nesting_is_refused_before_parsing(tmp_path, capsys, bad):
    status, answers = _score(tmp_path, _around(bad), capsys)
    error = _check_around(status, answers, "nested too deeply")
    assert error["id"] is None and status == 1


def test_nesting_over_the_line_limit_and_brackets_in_strings():
    from firmware.rules.case_scoring import score_line

    assert "nested too deeply" in score_line("[" * 100_000)["error"]           # (the line limit is not involved)
    assert "nested too deeply" in score_line('{"a":' * 100_000)["error"]
    answer = score_line(json.dumps(dict(CHICKEN, note="[" * 5000, expected=[[[[[[[[[[1]]]]]]]]]])))
    assert answer["total"] == 8                                                 # brackets in strings do not count


# -- numbers ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("field, literal", [
    ("chips", b'{"E": Infinity, "S": 0, "W": 100, "N": 100}'), ("chips", b'{"E": 1e400, "S": 0, "W": 100, "N": 100}'),
    ("dealer_streak", b"Infinity"), ("dealer_streak", b"1e400"), ("dealer_streak", b"-Infinity"),
    ("dealer_streak", b"NaN"), ("dealer_streak", b"9" * 5000)])
def test_non_finite_and_huge_numbers_are_an_error_naming_the_field(tmp_path, capsys, field, literal):
    line = json.dumps(dict(COMPETITION, table={field: 0})).encode().replace(b"0}", literal + b"}")
    status, answers = _score(tmp_path, _around(line), capsys)
    error = _check_around(status, answers, f"table.{field}")
    assert error["id"] == "k"


def test_a_5000_digit_id_and_a_lone_surrogate(tmp_path, capsys):
    lines = _around(b'{"id": ' + b"9" * 5000 + b', "hand": "1m"}') + _around(b'{"id": "\\ud800", "hand": "1m"}') \
        + _around(json.dumps(dict(CHICKEN, hand="56s678p\ud800W"), ensure_ascii=True).encode())
    status, answers = _score(tmp_path, lines, capsys)
    assert len(answers) == 9 and all(answers[i]["total"] == 8 for i in (0, 2, 3, 5, 6, 8))
    assert answers[1]["id"] is None and "'id'" in answers[1]["error"] and "5000 digits" in answers[1]["error"]
    assert answers[4]["id"] is None and "surrogate" in answers[4]["error"]
    assert answers[7]["id"] == "c" and "'hand'" in answers[7]["error"] and "surrogate" in answers[7]["error"]


@pytest.mark.parametrize("raw_id, words", [(b"NaN", "NaN"), (b"Infinity", "Infinity"), (b"-Infinity", "Infinity"),
                                           (b"1.5", "float"), (b"true", "bool"), (b"[1]", "array"),
                                           (b'{"a": 1}', "object"), (b"9007199254740993", "range")])
def test_an_id_that_is_not_a_string_or_an_integer_is_answered_as_null(tmp_path, capsys, raw_id, words):
    line = GOOD.replace(b'"id": "c"', b'"id": ' + raw_id)
    status, answers = _score(tmp_path, _around(line), capsys)
    error = _check_around(status, answers, "'id'")
    assert error["id"] is None and words in error["error"] and "null" in error["error"]


def test_good_ids_are_echoed():
    from firmware.rules.case_scoring import score_line

    for case_id in (0, -7, 2**53 - 1, "", "h1", "中", None):
        assert score_line(json.dumps(dict(CHICKEN, id=case_id)))["id"] == case_id


def test_an_answer_is_one_line_for_every_line_splitter(tmp_path, capsys):
    """U+0085, U+2028 and U+2029 break lines for str.splitlines and JavaScript: escaped in the output."""
    status, answers = _score(tmp_path, _around(json.dumps(dict(CHICKEN, id="a\x85b\u2028c\u2029d")).encode()), capsys)
    assert status == 0 and len(answers) == 3 and answers[1]["id"] == "a\x85b\u2028c\u2029d"


def test_the_output_is_utf8_whatever_the_locale():
    env = dict(os.environ, PYTHONIOENCODING="ascii")
    done = subprocess.run([sys.executable, "-m", "firmware.cli.main", "score"], input=GOOD + b"\n", cwd=ROOT,
                          capture_output=True, timeout=60, env=env)
    assert done.returncode == 0 and _strict(done.stdout.decode("utf-8"))["fans"][0]["name"] == "无番和"


# -- bytes -----------------------------------------------------------------------------------------------------

def test_invalid_utf8_in_a_file_is_an_error_for_that_line_only(tmp_path, capsys):
    status, answers = _score(tmp_path, _around(b'{"id": "\xff\xfe", "hand": "1m"}'), capsys)
    error = _check_around(status, answers, "UTF-8")
    assert error["id"] is None and status == 1


def test_crlf_a_bom_and_blank_lines(tmp_path, capsys):
    data = b"\xef\xbb\xbf" + GOOD + b"\r\n\r\n   \n\t\n" + GOOD + b"\r\n" + GOOD       # no final newline
    status, answers = _score(tmp_path, data, capsys)
    assert status == 0 and [a["total"] for a in answers] == [8, 8, 8]


def test_a_line_over_the_limit_is_skipped_in_bounded_chunks(tmp_path, capsys):
    from firmware.rules.case_scoring import MAX_LINE_BYTES

    huge = b'{"id": 1, "hand": "' + b"1" * (3 * MAX_LINE_BYTES) + b'"}'
    status, answers = _score(tmp_path, _around(huge) + b"[" * (MAX_LINE_BYTES + 1), capsys)
    assert len(answers) == 4
    error = _check_around(status, answers[:3], "too long")
    assert str(len(huge)) in error["error"] and error["id"] is None
    assert "too long" in answers[3]["error"] and status == 1


def test_the_line_reader_keeps_memory_bounded():
    """A line with no newline is read in chunks of the limit, never as a whole."""
    import io

    from firmware.rules.case_scoring import MAX_LINE_BYTES, iter_lines

    class Spy(io.BytesIO):
        biggest = 0

        def readline(self, size: int | None = -1) -> bytes:
            assert size is not None and 0 < size <= MAX_LINE_BYTES + 1
            chunk = super().readline(size)
            Spy.biggest = max(Spy.biggest, len(chunk))
            return chunk

    lines = list(iter_lines(Spy(b"x" * (10 * MAX_LINE_BYTES) + b"\n" + GOOD + b"\n")))
    assert len(lines) == 2 and lines[1] == GOOD and Spy.biggest <= MAX_LINE_BYTES + 1
    assert not isinstance(lines[0], bytes) and lines[0].size == 10 * MAX_LINE_BYTES


# -- the tile parser is linear ---------------------------------------------------------------------------------

def test_digits_without_a_suit_letter_are_an_error(tmp_path, capsys):
    status, answers = _score(tmp_path, _around(json.dumps(dict(CHICKEN, hand="1" * 30_000)).encode()), capsys)
    error = _check_around(status, answers, "rank without a suit letter")
    assert len(error["error"]) < 300 and status == 0      # a valid JSON line: read, not a valid case


@pytest.mark.parametrize("text, kinds", [("123m5pE", [0, 1, 2, 13, 27]), (" 1 1m", None), ("12", None),
                                         ("19f", None), ("78f C F P", [40, 41, 31, 32, 33]), ("", []),
                                         ("1m\n2p", [0, 10]), ("\u3000 9s", [26])])
def test_the_tile_parser_keeps_its_answers(text, kinds):
    from firmware.tiles.tile import TileError, parse

    if kinds is None:
        with pytest.raises(TileError):
            parse(text)
    else:
        assert parse(text) == kinds


@pytest.mark.parametrize("text, message", [("12", "rank without a suit letter in '12'"),
                                           ("0m", "unknown tile code '0'"), ("1mX", "unknown tile code 'X' in '1mX'"),
                                           ("9f", "'9f'"),
                                           ("x" * 100, "(100 characters)"), ("1" * 10**6, "(1000000 characters)")])
def test_tile_errors_name_the_code_and_stay_short(text, message):
    from firmware.tiles.tile import TileError, parse

    with pytest.raises(TileError) as info:
        parse(text)
    assert message in str(info.value) and len(str(info.value)) < 200


def test_a_1mb_tile_string_completes():
    """1 MB of digits, through the scorer's line function and the whole command (no timing asserted)."""
    code = ("import json, sys\n"
            "from firmware.rules.case_scoring import score_line\n"
            "case = {'id': 1, 'hand': '1' * 1_000_000, 'win_tile': '1m', 'seat_wind': 'E', 'round_wind': 'E'}\n"
            "print(json.dumps(score_line(json.dumps(case))))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "rank without a suit letter" in done.stdout, done.stderr[-2000:]
    line = json.dumps(dict(CHICKEN, hand="1" * 1_000_000)).encode()
    done = subprocess.run([sys.executable, "-m", "firmware.cli.main", "score"], input=_around(line), cwd=ROOT,
                          capture_output=True, timeout=60)
    answers = [_strict(a) for a in done.stdout.decode().splitlines()]
    assert done.returncode == 1 and len(answers) == 3 and "too long" in answers[1]["error"]


# -- strict types ----------------------------------------------------------------------------------------------

def _meld_case(**meld: Any) -> dict:
    return dict(CHICKEN, hand="56s678pWW", melds=[dict({"kind": "chow", "tiles": "123m", "from": "left"}, **meld),
                                                   {"kind": "chow", "tiles": "345m", "from": "left"}])


@pytest.mark.parametrize("case, field", [
    (dict(CHICKEN, hand="56s678pWW123m", melds=[{"kind": "kong", "tiles": "CCCC", "concealed": "false",
                                                  "from": "left"}]), "concealed"),
    (_meld_case(concealed=0), "concealed"), (_meld_case(tiles=123), "tiles"), (_meld_case(kind=["chow"]), "kind"),
    (_meld_case(**{"from": 1}), "from"), (dict(CHICKEN, melds={"kind": "chow"}), "melds"),
    (dict(CHICKEN, melds=[[1]]), "melds[0]"), (dict(CHICKEN, hand=["5s"]), "hand"),
    (dict(CHICKEN, win_tile=7), "win_tile"),
    (dict(CHICKEN, self_drawn="false"), "self_drawn"), (dict(CHICKEN, last_tile=1), "last_tile"),
    (dict(CHICKEN, kong_win=0.0), "kong_win"), (dict(CHICKEN, flowers=True), "flowers"),
    (dict(CHICKEN, flowers=1.0), "flowers"), (dict(CHICKEN, flowers="1"), "flowers"),
    (dict(CHICKEN, flowers=-1), "flower"),
    (dict(CHICKEN, seat_wind=["S"]), "seat_wind"), (dict(CHICKEN, round_wind="east"), "round_wind"),
    (dict(CHICKEN, discarder=2), "discarder"), (dict(CHICKEN, rules=1), "rules"),
    (dict(COMPETITION, table=[1]), "table"), (dict(COMPETITION, table={"dealer_streak": "1"}), "table.dealer_streak"),
    (dict(COMPETITION, table={"dealer_streak": 1.5}), "table.dealer_streak"),
    (dict(COMPETITION, table={"dealer_streak": True}), "table.dealer_streak"),
    (dict(COMPETITION, table={"dealer_streak": -1}), "table.dealer_streak"),
    (dict(COMPETITION, table={"dealer_streak": 10**18}), "table.dealer_streak"),
    (dict(COMPETITION, table={"chips": {"E": "100"}}), "table.chips.E"),
    (dict(COMPETITION, table={"chips": {"E": 1.0}}), "table.chips.E"),
    (dict(COMPETITION, table={"chips": {"E": 10**19}}), "table.chips.E"),
    (dict(COMPETITION, table={"chips": {"X": 1}}), "table.chips"),
    (dict(COMPETITION, table={"chips": [1]}), "table.chips"),
    (dict(COMPETITION, table={"liable": 3}), "table.liable"),
    (dict(COMPETITION, table={"open_seats": "EW"}), "table.open_seats"),
    (dict(COMPETITION, table={"first_discard_followed": "false"}), "table.first_discard_followed"),
    (dict(COMPETITION, table={"dead_hands": ["Q"]}), "table.dead_hands"),
    (dict(COMPETITION, table={"dead_hands": "E"}), "table.dead_hands"),
    (dict(CHICKEN, table={"dealer_streak": "x"}), "table.dealer_streak"),
])
def test_a_wrong_type_is_an_error_naming_the_field(case, field):
    from firmware.rules.case_scoring import score_line

    answer = score_line(json.dumps(case))
    assert set(answer) == {"id", "error"} and answer["id"] == case["id"], answer
    assert field in answer["error"], answer


def test_strict_types_keep_the_good_cases():
    from firmware.rules.case_scoring import score_line

    kong = dict(CHICKEN, hand="56s678pWW123m", melds=[{"kind": "kong", "tiles": "CCCC", "concealed": True}])
    assert score_line(json.dumps(kong))["win"] is True
    assert score_line(json.dumps(dict(COMPETITION, table={"dealer_streak": 1, "liable": None,
                                                           "chips": {"E": 5, "S": 0}})))["win"] is True
    assert score_line(json.dumps(dict(CHICKEN, table=None, discarder=None, flowers=None)))["total"] == 8


# -- not JSON lines --------------------------------------------------------------------------------------------

def test_the_readme_example_over_several_lines_is_answered_once(tmp_path, capsys):
    status, answers = _score(tmp_path, README_EXAMPLE, capsys)
    assert status == 2 and len(answers) == 1 and answers[0]["id"] is None
    assert "one case per line" in answers[0]["error"] and "5 lines" in answers[0]["error"]


def test_a_json_document_is_answered_once(tmp_path, capsys):
    status, answers = _score(tmp_path, (DATA / "mcr_known_answers.json").read_bytes(), capsys)
    assert status == 2 and len(answers) == 1
    assert "one JSON document" in answers[0]["error"] and "one case per line" in answers[0]["error"]
    assert "124" in answers[0]["error"]
    status, answers = _score(tmp_path, b"[\n" + GOOD + b",\n" + GOOD + b"\n]\n", capsys)
    assert status == 2 and len(answers) == 1 and "jq -c" in answers[0]["error"]


def test_a_multi_line_object_after_good_lines_says_one_case_per_line(tmp_path, capsys):
    status, answers = _score(tmp_path, GOOD + b"\n" + README_EXAMPLE + GOOD + b"\n", capsys)
    assert status == 1 and len(answers) == 7 and answers[0]["total"] == 8 and answers[6]["total"] == 8
    assert all("one case per line" in a["error"] for a in answers[1:6])


def test_a_first_line_that_only_looks_like_a_document(tmp_path, capsys):
    """An unfinished first line is not a document when the lines after it do not complete it."""
    status, answers = _score(tmp_path, b'{"id": 1,\n' + GOOD + b"\n" + GOOD + b"\n", capsys)
    assert status == 1 and len(answers) == 3 and "one case per line" in answers[0]["error"]
    assert answers[1]["total"] == 8 and answers[2]["total"] == 8
    status, answers = _score(tmp_path, b"[\n" + b"[" * 40 + b"\n" + GOOD + b"\n", capsys)
    assert status == 1 and len(answers) == 3 and answers[2]["total"] == 8


def test_an_array_on_one_line_says_one_case_per_line(tmp_path, capsys):
    status, answers = _score(tmp_path, _around(b"[" + GOOD + b", " + GOOD + b"]"), capsys)
    assert "one case per line" in _check_around(status, answers, "JSON object")["error"]


def test_exit_status(tmp_path, capsys, monkeypatch):
    import io

    negative = (DATA / "mcr-negative.jsonl").read_bytes()
    assert _score(tmp_path, negative, capsys)[0] == 0                             # not wins: still read
    assert _score(tmp_path, _around(b'{"id": 1, "hand": "1m"}'), capsys)[0] == 0    # not a valid case: still read
    assert _score(tmp_path, _around(b"{"), capsys)[0] == 1                          # not JSON
    assert _score(tmp_path, b"", capsys) == (0, [])
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(_around(b"\xff")), encoding="utf-8"))
    assert main(["score", "-"]) == 1
    assert len(capsys.readouterr().out.splitlines()) == 3


# -- generated hostile lines -------------------------------------------------------------------------------------

FIELDS = ("id", "rules", "hand", "win_tile", "seat_wind", "round_wind", "flowers", "discarder", "self_drawn",
          "last_of_kind", "kong_win", "last_tile", "flower_win", "melds", "table")
LITERALS = (b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e999", b"9" * 5000, b"-" + b"9" * 30, b'"\\ud800"',
            b'"\\udfff\\ud800"', b"[" * 3000, b"{}", b"[]", b"null", b"true", b'"false"', b"0.5", b'"\xff"')
_json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                            | st.text(max_size=20), lambda inner: st.lists(inner, max_size=3)
                            | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)


def _case(i: int) -> dict:
    return dict(CHICKEN if i % 2 else COMPETITION, id=i)


ANY = object()      # a line whose answer may carry any id (random bytes, a generated id)


@st.composite
def hostile_line(draw: st.DrawFn, i: int) -> tuple[bytes, Any]:
    """A hostile line and the id its answer carries (or null)."""
    kind = draw(st.sampled_from(["bytes", "nesting", "literal", "wrong_type", "tiles", "table", "meld", "good"]))
    case = _case(i)
    if kind == "bytes":
        return draw(st.binary(max_size=200)), ANY
    if kind == "nesting":
        depth = draw(st.integers(1, 20_000))
        return draw(st.sampled_from([b"[", b'{"a":', b'{"id": 1, "melds": ['])) * depth, None
    if kind in ("literal", "wrong_type"):
        field = draw(st.sampled_from(FIELDS))
        if kind == "literal":
            line = json.dumps(dict(case, **{field: "@@"})).encode().replace(b'"@@"', draw(st.sampled_from(LITERALS)))
        else:
            line = json.dumps(dict(case, **{field: draw(_json_values)})).encode()
        return line, ANY if field == "id" else i
    if kind == "tiles":
        text = draw(st.text(alphabet="123456789mpsfESWNCFP 0x中", max_size=50)) * draw(st.integers(1, 3000))
        return json.dumps(dict(case, **{draw(st.sampled_from(["hand", "win_tile"])): text})).encode(), i
    if kind == "table":
        key = draw(st.sampled_from(["dealer_streak", "chips", "liable", "open_seats", "first_discard_followed",
                                    "dead_hands"]))
        literal = draw(st.sampled_from(LITERALS))
        return json.dumps(dict(case, table={key: "@@"})).encode().replace(b'"@@"', literal), i
    if kind == "meld":
        key = draw(st.sampled_from(["kind", "tiles", "from", "concealed"]))
        meld = dict(case["melds"][0], **{key: draw(_json_values)})
        return json.dumps(dict(case, melds=[meld])).encode(), i
    return json.dumps(case).encode(), i


@st.composite
def hostile_file(draw: st.DrawFn) -> list[tuple[bytes, Any]]:
    n = draw(st.integers(1, 12))
    return [(GOOD, "c")] + [draw(hostile_line(i)) for i in range(1, n + 1)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow, HealthCheck.data_too_large])
@given(lines=hostile_file())
def test_generated_hostile_lines_get_one_strict_answer_each(tmp_path, capsys, lines):
    data = b"".join(line + b"\n" for line, _ in lines)
    status, answers = _score(tmp_path, data, capsys)
    expected = [case_id for line, case_id in lines for part in line.split(b"\n") if part.strip(b" \t\r")]
    assert len(answers) == len(expected) and status in (0, 1)
    for answer, case_id in zip(answers, expected):
        assert ("error" in answer) != ("win" in answer), answer
        assert answer["id"] is None or isinstance(answer["id"], (str, int)) and not isinstance(answer["id"], bool)
        assert case_id is ANY or answer["id"] in (case_id, None), (answer, case_id)
    assert answers[0]["total"] == 8
