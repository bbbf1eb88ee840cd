"""Where a package's compiled catalogues are read from: the folder beside its modules; a package with none there
(one run from a zip) speaks English and says so in the log."""

import sys
import zipfile
from pathlib import Path

import gettext

from firmware.i18n import catalogue

CLI_MO = Path(__file__).parents[2] / "firmware" / "cli" / "locale" / "zh_CN" / "LC_MESSAGES" / "cli.mo"


def test_an_installed_package_s_catalogue_is_read_from_its_folder():
    found = catalogue("firmware.cli", "cli", "zh_CN")
    assert isinstance(found, gettext.GNUTranslations)
    assert found.gettext("score hands given as JSON lines") != "score hands given as JSON lines"


def test_a_package_with_no_catalogue_folder_speaks_english_and_says_so(tmp_path, monkeypatch, caplog):
    archive = tmp_path / "zipped.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("zipped_words/__init__.py", "")
        zipped.write(CLI_MO, "zipped_words/locale/zh_CN/LC_MESSAGES/cli.mo")
    monkeypatch.syspath_prepend(str(archive))
    monkeypatch.delitem(sys.modules, "zipped_words", raising=False)
    found = catalogue("zipped_words", "cli", "zh_CN")
    assert found.gettext("score hands given as JSON lines") == "score hands given as JSON lines"
    assert "no compiled catalogue cli for zh_CN in zipped_words" in caplog.text
