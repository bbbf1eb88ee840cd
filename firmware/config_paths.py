"""Where configuration is read from: the defaults shipped in the package, and a table's own folder.

The package carries its defaults (table models, rule sets, the simulator's
tile registries, fault scenarios, the systemd unit) as the package data
``firmware.defaults``, read through :mod:`importlib.resources`: the same
files whether the firmware runs from a checkout, an editable install or a
wheel in a release's virtualenv.  A table's service never reads them
directly: ``mjtable install`` copies them to the table's folder
(``/etc/mjtable``, or ``--config-dir``), where a technician edits the
table model and enrols the tile sets, and the service reads only that.
"""

from __future__ import annotations

from importlib import resources
import logging
from pathlib import Path

from firmware.faults import ConfigError
from firmware.i18n import worded

log = logging.getLogger(__name__)

SHIPPED_PACKAGE = "firmware.defaults"
TABLE_CONFIG_DIR = Path("/etc/mjtable")      # a table's own configuration (the service's default)
TABLE_MODEL = Path("tables") / "table.toml"  # the model a table's service runs, inside its folder


def shipped_dir() -> Path:
    """The folder of the shipped defaults (``config/`` of the checkout, ``firmware/defaults`` of a wheel)."""
    folder = resources.files(SHIPPED_PACKAGE)
    if not isinstance(folder, Path):          # a zipped install: the defaults must be on a file system
        raise ConfigError(f"the shipped configuration ({SHIPPED_PACKAGE}) is not on a file system: {folder}")
    return folder


def shipped_file(*parts: str) -> Path:
    return shipped_dir().joinpath(*parts)


def table_model_path(config_dir: Path) -> Path:
    """The table model of a table's configuration folder; a clear error where there is none."""
    path = config_dir / TABLE_MODEL
    if not path.is_file():
        raise worded(ConfigError, "%(path)s: no table model (install the table first: mjtable install, or name a "
                                  "folder with --config-dir, or a model with --table)", path=path)
    return path


def table_model(table: Path | None, config_dir: Path | None, simulated: bool) -> tuple[Path, Path | None]:
    """The model to run and the configuration folder its rule sets come from (``--table``, ``--config-dir``).

    A table reads only its own folder.  A dry run (``simulated``) on a machine with no installed table takes the
    shipped model, and says so."""
    folder = config_dir or TABLE_CONFIG_DIR
    if table:
        return table, config_dir
    if simulated and config_dir is None and not (folder / TABLE_MODEL).is_file():
        log.info("no table installed at %s: the shipped four-port double-set model", folder)
        return shipped_file("tables", "four_port_double.toml"), None
    return table_model_path(folder), folder


def rules_file(name: str, config_dir: Path | None = None) -> Path:
    """A rule set's file: the table's own copy where its folder has one, else the shipped one."""
    if config_dir is not None:
        own = config_dir / "rules" / f"{name}.toml"
        if own.is_file():
            return own
    return shipped_file("rules", f"{name}.toml")
