"""Change-freeze windows: an acp-gate plugin in Python (componentize-py).

During a configured window (say, Friday afternoons, or the holiday freeze), any edit, delete or
move of a configured path is put to a person (`ask`), with the window's reason. Outside every
window, and for paths outside the frozen set, the plugin abstains and the rest of the chain
decides.

The time is the request's `received_at_ms` (set by the host when the request arrived): a plugin
has no clock of its own. Wall-clock hours are computed with the config's fixed `utc_offset`,
because a plugin has no time-zone database either.

Config (the handler's `[handler.config]`, delivered as JSON):

    paths = ["deploy/**", "**/migrations/**"]   # fnmatch globs, relative to a workspace root,
                                                # or absolute; `*` also matches `/`
    utc_offset = "+01:00"                       # the office's offset from UTC [default +00:00]
    [[handler.config.windows]]
    days = ["fri"]                              # mon..sun [default: every day]
    from = "15:00"                              # [default 00:00]
    to = "24:00"                                # [default 24:00]
    start_date = "2025-12-19"                   # optional, inclusive, local dates
    end_date = "2026-01-04"
    reason = "Friday afternoon freeze"
"""

import datetime
import fnmatch
import json

from wit_world import exports
from componentize_py_types import Err
from wit_world.imports import log
from wit_world.imports.types import (
    Access,
    Request,
    Verdict,
    Verdict_Abstain,
    Verdict_Ask,
)

DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]


class ConfigError(Exception):
    pass


def minutes(text: str, key: str) -> int:
    """'HH:MM' -> minutes after midnight; '24:00' is the end of the day."""
    try:
        hours, mins = text.split(":")
        value = int(hours) * 60 + int(mins)
    except ValueError:
        raise ConfigError(f"{key}: `{text}` is not HH:MM")
    if not 0 <= value <= 24 * 60 or not 0 <= int(mins) < 60:
        raise ConfigError(f"{key}: `{text}` is not a time of day")
    return value


def offset(text: str) -> datetime.timezone:
    sign = -1 if text.startswith("-") else 1
    return datetime.timezone(
        sign * datetime.timedelta(minutes=minutes(text.lstrip("+-"), "utc_offset"))
    )


def date(text: str, key: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"{key}: `{text}` is not YYYY-MM-DD")


class Window:
    def __init__(self, table: dict, number: int):
        key = f"windows[{number}]"
        unknown = set(table) - {"days", "from", "to", "start_date", "end_date", "reason"}
        if unknown:
            raise ConfigError(f"{key}: unknown key(s) {sorted(unknown)}")
        days = table.get("days", DAYS)
        for day in days:
            if day not in DAYS:
                raise ConfigError(f"{key}.days: `{day}` is not one of {DAYS}")
        self.days = {DAYS.index(d) for d in days}
        self.start = minutes(table.get("from", "00:00"), f"{key}.from")
        self.end = minutes(table.get("to", "24:00"), f"{key}.to")
        self.first = date(table["start_date"], f"{key}.start_date") if "start_date" in table else None
        self.last = date(table["end_date"], f"{key}.end_date") if "end_date" in table else None
        self.reason = table.get("reason", "change freeze")
        self.label = f"{table.get('from', '00:00')}-{table.get('to', '24:00')}"

    def covers(self, when: datetime.datetime) -> bool:
        now = when.hour * 60 + when.minute
        day = when.date()
        return (
            when.weekday() in self.days
            and self.start <= now < self.end
            and (self.first is None or day >= self.first)
            and (self.last is None or day <= self.last)
        )


class Config:
    def __init__(self, text: str):
        table = json.loads(text)
        unknown = set(table) - {"paths", "utc_offset", "windows"}
        if unknown:
            raise ConfigError(f"unknown key(s) {sorted(unknown)}")
        self.paths = table.get("paths", [])
        if not self.paths:
            raise ConfigError("`paths` is empty: nothing would ever be frozen")
        self.zone = offset(table.get("utc_offset", "+00:00"))
        self.windows = [Window(w, i) for i, w in enumerate(table.get("windows", []))]


def frozen_pattern(path: str, request: Request, config: Config):
    """The first configured pattern that `path` (absolute) falls under, if any."""
    candidates = [path]
    for root in request.workspace_roots:
        prefix = root.rstrip("/") + "/"
        if path.startswith(prefix):
            candidates.append(path[len(prefix):])
    for pattern in config.paths:
        if any(fnmatch.fnmatchcase(c, pattern) for c in candidates):
            return pattern
    return None


class Handler(exports.Handler):
    def evaluate(self, request: Request, config: str) -> Verdict:
        try:
            settings = Config(config)
        except (ConfigError, ValueError, TypeError, AttributeError, KeyError) as error:
            raise Err(f"invalid [handler.config]: {error}")
        when = datetime.datetime.fromtimestamp(request.received_at_ms / 1000, tz=settings.zone)
        window = next((w for w in settings.windows if w.covers(when)), None)
        if window is None:
            return Verdict_Abstain()
        for ref in request.paths:
            if ref.access not in (Access.WRITE, Access.DELETE):
                continue
            pattern = frozen_pattern(ref.absolute, request, settings)
            if pattern is not None:
                log.write(log.Level.INFO, f"{ref.absolute} matches `{pattern}` during {window.label}")
                stamp = when.strftime("%a %H:%M")
                return Verdict_Ask(
                    f"{window.reason}: {ref.raw} is frozen ({pattern}) on {stamp} ({window.label})"
                )
        return Verdict_Abstain()
