"""The fleet's MQTT topic tree ``mj/v1/<site>/tbl/<table>/...``: ids, builders and a parser.

Every table owns one subtree.  Retained leaves say what the table is now
(``avail``, ``meta``, ``state``, ``faults``, ``counters``, ``warnings``); ``evt/<kind>``
carries events (QoS 1, not retained, from the outbox); ``cmd/<verb>`` is
where staff send commands, ``assign`` the hall's retained, signed assignment
of the table for a tournament round (written by the hall, read by the
table), and ``resp/<anything>`` where the table answers
them (the requester's MQTT 5 response topic must lie there, inside the
table's own subtree, so that the broker's ACL never has to let a table write
anywhere else).  Site and table ids are short and plain (letters, digits,
``_`` and ``-``): never ``/``, ``+``, ``#`` or ``.``, so an id cannot open
another subtree, act as a wildcard or be mistaken for a staff account
(staff account names carry a ``.``).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from firmware.ports.broker import ID_PATTERN
from firmware.store.outbox import EventKind
from firmware.i18n import N_, Phrase, worded

PREFIX = "mj/v1"
ASSIGN = "assign"            # the hall's retained assignment of a table (firmware/fleet/assignment_auth.py)
ID_RE = re.compile(ID_PATTERN)


class Leaf(str, enum.Enum):
    """The retained leaves of a table's subtree."""

    AVAIL = "avail"
    META = "meta"
    STATE = "state"
    FAULTS = "faults"
    COUNTERS = "counters"
    WARNINGS = "warnings"            # shuffle-bias and wear warnings (not faults: the table plays on)


class Verb(str, enum.Enum):
    """The command allow-list (``cmd/<verb>``).  No verb moves a motor."""

    REBIRTH = "rebirth"               # publish the retained leaves again
    RESEND_SINCE = "resend_since"     # publish again the events after a seq still kept in the outbox
    ACK = "ack"                       # acknowledge a recoverable fault (latched ones only at the table)
    UPDATE = "update"                 # fetch a signed release bundle, install it with its self-test (staged updates)
    ROLLBACK = "rollback"             # go back to the previous release, if the current one is the version named
    SESSION_OPEN = "session_open"     # open the table for {"minutes": N} (开台; a parlour's booking system)
    SESSION_CLOSE = "session_close"   # end the table session (the hand in play is finished first)


# what an id is called where it is checked (an option's name is said as it is typed)
ID_NAMES = (N_("site"), N_("table id"), N_("key name"), N_("requester"), N_("bridge client id"))


def check_id(value: str, what: str) -> str:
    """``value`` if it is a valid site or table id; else ValueError naming ``what``."""
    if not isinstance(value, str) or not ID_RE.match(value):
        raise worded(ValueError, "%(what)s %(value)r: 1 to 64 letters, digits, '_' or '-', starting with a letter or "
                                 "digit (no '/', '+', '#' or '.')",
                     what=Phrase(what) if what in ID_NAMES else what, value=value)
    return value


@dataclass(frozen=True)
class TableTopics:
    """Every topic of one table."""

    site: str
    table: str

    def __post_init__(self) -> None:
        check_id(self.site, "site")
        check_id(self.table, "table id")

    @property
    def root(self) -> str:
        return f"{PREFIX}/{self.site}/tbl/{self.table}"

    def leaf(self, leaf: Leaf) -> str:
        return f"{self.root}/{leaf.value}"

    @property
    def avail(self) -> str:
        return self.leaf(Leaf.AVAIL)

    def event(self, kind: EventKind | str) -> str:
        return f"{self.root}/evt/{EventKind(kind).value}"

    @property
    def assign(self) -> str:
        """The table's assignment topic: the hall's retained, signed assignment for a tournament round (the table
        reads it, never writes it)."""
        return f"{self.root}/{ASSIGN}"

    def command(self, verb: Verb | str) -> str:
        return f"{self.root}/cmd/{Verb(verb).value}"

    @property
    def commands_filter(self) -> str:
        """What the table subscribes to for its commands (every verb; unknown verbs are refused and logged)."""
        return f"{self.root}/cmd/+"

    @property
    def response_prefix(self) -> str:
        return f"{self.root}/resp/"

    def response(self, requester: str) -> str:
        """A response topic for ``requester`` (e.g. a technician's console)."""
        return self.response_prefix + check_id(requester, "requester")

    def owns_response_topic(self, topic: str) -> bool:
        """A requester's response topic is answered only inside this table's ``resp/`` subtree."""
        rest = topic[len(self.response_prefix):] if topic.startswith(self.response_prefix) else ""
        return bool(rest) and not any(c in rest for c in "+#\x00")


def rollout_topic(site: str) -> str:
    """Where ``mjtable fleet release`` publishes a staged update's progress for the hall (retained, QoS 1)."""
    return f"{PREFIX}/{check_id(site, 'site')}/rollout"


def site_filter(site: str) -> str:
    """Everything every table of ``site`` publishes (a console's subscription)."""
    return f"{PREFIX}/{check_id(site, 'site')}/tbl/+/#"


def site_subscriptions(site: str) -> list[tuple[str, int]]:
    """A consumer's subscriptions (filter, QoS): every table's retained leaves at QoS 0 (never queued for a
    persistent session that is away: the broker holds the last of each, retained) and its events at QoS 1."""
    tables = f"{PREFIX}/{check_id(site, 'site')}/tbl/+"
    return [(f"{tables}/+", 0), (f"{tables}/evt/+", 1)]


def chain_subscriptions() -> list[tuple[str, int]]:
    """A chain's consumer: every site's tables, as :func:`site_subscriptions` for one site."""
    tables = f"{PREFIX}/+/tbl/+"
    return [(f"{tables}/+", 0), (f"{tables}/evt/+", 1)]


@dataclass(frozen=True)
class ParsedTopic:
    """A topic of the tree: ``section`` is a :class:`Leaf` value, ``assign``, ``evt``, ``cmd`` or ``resp``; ``name``
    is the event kind, the verb or the rest of a response topic ('' for a leaf)."""

    site: str
    table: str
    section: str
    name: str = ""


def parse(topic: str) -> ParsedTopic | None:
    """The parts of a topic of the tree; None for anything else (another prefix, a bad id, an unknown leaf)."""
    parts = topic.split("/")
    if len(parts) < 5 or "/".join(parts[:2]) != PREFIX or parts[3] != "tbl":
        return None
    site, table, rest = parts[2], parts[4], parts[5:]
    if not ID_RE.match(site) or not ID_RE.match(table) or not rest:
        return None
    if len(rest) == 1 and rest[0] in {leaf.value for leaf in Leaf}:
        return ParsedTopic(site, table, rest[0])
    if len(rest) == 1 and rest[0] == ASSIGN:
        return ParsedTopic(site, table, ASSIGN)
    if len(rest) == 2 and rest[0] == "evt" and rest[1] in {k.value for k in EventKind}:
        return ParsedTopic(site, table, "evt", rest[1])
    if len(rest) == 2 and rest[0] == "cmd" and rest[1]:
        return ParsedTopic(site, table, "cmd", rest[1])
    if len(rest) >= 2 and rest[0] == "resp":
        return ParsedTopic(site, table, "resp", "/".join(rest[1:]))
    return None
