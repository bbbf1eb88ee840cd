"""firmware.release.os_checks: the OS checks against power cuts, on fake roots built in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware.release.os_checks import (FSTAB_LINE, OVERLAY_FIX, RECURSE_FIX, OsCheck, check_table_os, format_report,
                                        missing, mount_for, parse_mount_table)

CMDLINE = ("console=serial0,115200 console=tty1 root=PARTUUID=1234abcd-02 rootfstype=ext4 fsck.repair=yes "
           "rootwait quiet splash plymouth.ignore-serial-consoles cfg80211.ieee80211_regdom=GB\n")
STOCK_FSTAB = """proc            /proc           proc    defaults          0       0
PARTUUID=1234abcd-01  /boot/firmware  vfat    defaults          0       2
PARTUUID=1234abcd-02  /               ext4    defaults,noatime  0       1
"""
STOCK_MOUNTS = """/dev/mmcblk0p2 / ext4 rw,noatime 0 0
devtmpfs /dev devtmpfs rw,relatime,size=1875296k,nr_inodes=468824,mode=755 0 0
proc /proc proc rw,relatime 0 0
tmpfs /run tmpfs rw,nosuid,nodev,size=779392k,nr_inodes=819200,mode=755 0 0
/dev/mmcblk0p1 /boot/firmware vfat rw,relatime,fmask=0022,dmask=0022,codepage=437,iocharset=ascii 0 0
"""
OVERLAYROOT_MOUNTS = """/dev/mmcblk0p2 /media/root-ro ext4 ro,relatime 0 0
tmpfs-root /media/root-rw tmpfs rw,relatime 0 0
overlayroot / overlay rw,relatime,lowerdir=/media/root-ro,upperdir=/media/root-rw/overlay,\
workdir=/media/root-rw/overlay-workdir 0 0
proc /proc proc rw,relatime 0 0
tmpfs /run tmpfs rw,nosuid,nodev,size=779392k,nr_inodes=819200,mode=755 0 0
/dev/mmcblk0p1 /boot/firmware vfat rw,relatime,fmask=0022,dmask=0022,codepage=437,iocharset=ascii 0 0
"""
DATA_MOUNT = "/dev/mmcblk0p3 /var/lib/mjtable ext4 rw,noatime,commit=1 0 0\n"
JOURNALD_CONF = """#  This file is part of systemd.
[Journal]
#Storage=auto
#Compress=yes
#SystemMaxUse=
#RuntimeMaxUse=
"""
VOLATILE = "[Journal]\nStorage=volatile\nRuntimeMaxUse=32M\n"


def make_root(tmp: Path, *, mounts: str | None = STOCK_MOUNTS, fstab: str | None = STOCK_FSTAB,
              cmdline: str | None = CMDLINE, journald: str | None = JOURNALD_CONF,
              dropins: dict[str, str] | None = None, journal_dir: bool = True) -> Path:
    files = {"proc/mounts": mounts, "etc/fstab": fstab, "boot/firmware/cmdline.txt": cmdline,
             "etc/systemd/journald.conf": journald, **(dropins or {})}
    for name, text in files.items():
        if text is not None:
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_text(text)
    if journal_dir:
        (tmp / "var/log/journal").mkdir(parents=True)
    return tmp


def set_up_right(tmp: Path, **overrides) -> Path:
    """A bookworm table done as docs/table-os.md says: overlayroot (recurse=0), data partition, volatile journal."""
    kwargs = dict(mounts=OVERLAYROOT_MOUNTS + DATA_MOUNT, fstab=STOCK_FSTAB + FSTAB_LINE + "\n",
                  cmdline="overlayroot=tmpfs:recurse=0 " + CMDLINE,
                  dropins={"etc/systemd/journald.conf.d/mjtable.conf": VOLATILE})
    kwargs.update(overrides)
    return make_root(tmp, **kwargs)


def by_name(checks: list[OsCheck]) -> dict[str, OsCheck]:
    return {c.name.split(" (")[0]: c for c in checks}


def data_check(root: Path, data_dir: str = "/var/lib/mjtable") -> OsCheck:
    return by_name(check_table_os(root, Path(data_dir)))["data partition"]


def test_a_bookworm_table_set_up_right_passes_every_check(tmp_path):
    checks = check_table_os(set_up_right(tmp_path))
    assert [c.name for c in checks] == ["read-only root", "data partition (/var/lib/mjtable)", "journald"]
    assert [c.ok for c in checks] == [True, True, True], format_report(checks)
    assert missing(checks) == []
    report = format_report(checks)
    assert [line.split()[0] for line in report.splitlines()] == ["ok", "ok", "ok"]


def test_a_stock_image_fails_each_check_with_its_fix(tmp_path):
    checks = by_name(check_table_os(make_root(tmp_path)))
    root, data, journald = checks["read-only root"], checks["data partition"], checks["journald"]
    assert (root.ok, data.ok, journald.ok) == (False, False, False)
    assert root.fix == OVERLAY_FIX and "do_overlayfs 0" in root.fix and "ext4" in root.detail
    assert FSTAB_LINE in data.fix and "root file system" in data.detail
    assert "journald.conf.d/mjtable.conf" in journald.fix and "Storage=volatile" in journald.fix
    assert "Storage=auto (the default)" in journald.detail and "/var/log/journal exists" in journald.detail
    report = format_report(list(checks.values()))
    assert report.count("MISSING") == 3 and report.count("fix: ") == 3
    assert missing(list(checks.values())) == list(checks.values())


@pytest.mark.parametrize("fstype", ["vfat", "exfat"])
def test_a_fat_data_partition_is_not_ok(tmp_path, fstype):
    check = data_check(set_up_right(tmp_path, mounts=OVERLAYROOT_MOUNTS
                                    + f"/dev/sda1 /var/lib/mjtable {fstype} rw,relatime 0 0\n"))
    assert check.ok is False and fstype in check.detail and "mkfs.ext4" in check.fix


def test_an_f2fs_data_partition_is_ok(tmp_path):
    check = data_check(set_up_right(tmp_path, mounts=OVERLAYROOT_MOUNTS
                                    + "/dev/mmcblk0p3 /var/lib/mjtable f2fs rw,lazytime 0 0\n"))
    assert check.ok is True and "f2fs" in check.detail


@pytest.mark.parametrize("option", ["nobarrier", "barrier=0", "data=writeback"])
def test_options_that_lose_committed_data_are_not_ok(tmp_path, option):
    check = data_check(set_up_right(tmp_path, mounts=OVERLAYROOT_MOUNTS
                                    + f"/dev/mmcblk0p3 /var/lib/mjtable ext4 rw,noatime,{option} 0 0\n"))
    assert check.ok is False and option in check.detail and option in check.fix


def test_a_long_commit_interval_is_ok_with_advice(tmp_path):
    checks = check_table_os(set_up_right(tmp_path, mounts=OVERLAYROOT_MOUNTS
                                         + "/dev/mmcblk0p3 /var/lib/mjtable ext4 rw,commit=30 0 0\n"))
    check = by_name(checks)["data partition"]
    assert check.ok is True and "commit=30" in check.detail and "commit=1" in check.fix
    assert "advice: " in format_report(checks) and "fix: " not in format_report(checks)


def test_a_tmpfs_data_dir_is_lost_at_power_off(tmp_path):
    check = data_check(set_up_right(tmp_path, mounts=OVERLAYROOT_MOUNTS
                                    + "tmpfs /var/lib/mjtable tmpfs rw,size=65536k 0 0\n"))
    assert check.ok is False and "RAM" in check.detail and FSTAB_LINE in check.fix


def test_the_last_mount_on_a_point_is_the_one_on_top(tmp_path):
    stacked = OVERLAYROOT_MOUNTS + DATA_MOUNT + "tmpfs /var/lib/mjtable tmpfs rw 0 0\n"
    assert data_check(set_up_right(tmp_path, mounts=stacked)).ok is False


def test_the_mount_is_the_longest_mount_point_above_the_dir_by_whole_names():
    mounts = parse_mount_table("/dev/a / ext4 rw 0 0\n/dev/b /var/lib/mjt ext4 rw 0 0\n/dev/c /var ext4 rw 0 0\n")
    assert mount_for(mounts, "/var/lib/mjtable").device == "/dev/c"
    assert mount_for(mounts, "/var/lib/mjt/db").device == "/dev/b"
    assert mount_for(mounts, "/opt").device == "/dev/a"


def test_data_on_an_overlay_root_fails_with_its_own_partition_as_fix(tmp_path):
    root = set_up_right(tmp_path, mounts=OVERLAYROOT_MOUNTS, fstab=STOCK_FSTAB)
    checks = by_name(check_table_os(root))
    assert checks["read-only root"].ok is True
    assert checks["data partition"].ok is False and "RAM" in checks["data partition"].detail
    assert "own ext4 partition" in checks["data partition"].fix and FSTAB_LINE in checks["data partition"].fix


def test_a_data_partition_in_fstab_but_not_mounted(tmp_path):
    check = data_check(set_up_right(tmp_path, mounts=OVERLAYROOT_MOUNTS))
    assert check.ok is False and "not mounted" in check.detail and check.fix.startswith("sudo mount /var/lib/mjtable")


def test_a_data_partition_mounted_by_hand_only_is_gone_after_the_next_boot(tmp_path):
    check = data_check(set_up_right(tmp_path, fstab=STOCK_FSTAB))
    assert check.ok is False and "not in /etc/fstab" in check.detail


def test_a_mount_unit_counts_as_well_as_an_fstab_line(tmp_path):
    root = set_up_right(tmp_path, fstab=STOCK_FSTAB)
    (root / "etc/systemd/system").mkdir(parents=True)
    (root / "etc/systemd/system/var-lib-mjtable.mount").write_text("[Mount]\nWhat=/dev/mmcblk0p3\n")
    assert data_check(root).ok is True


def test_overlayroot_recursing_into_fstab_puts_the_data_in_ram(tmp_path):
    recursed = OVERLAYROOT_MOUNTS + (
        "/dev/mmcblk0p3 /media/root-ro/var/lib/mjtable ext4 ro,noatime 0 0\n"
        "/media/root-ro/var/lib/mjtable /var/lib/mjtable overlay rw,relatime,lowerdir=/media/root-ro/var/lib/mjtable,"
        "upperdir=/media/root-rw/overlay/var/lib/mjtable,workdir=/media/root-rw/overlay-workdir 0 0\n")
    check = data_check(set_up_right(tmp_path, mounts=recursed, cmdline="overlayroot=tmpfs " + CMDLINE))
    assert check.ok is False and "recurses" in check.detail and check.fix == RECURSE_FIX


def test_overlayroot_enabled_for_the_next_boot_without_recurse_0_is_caught_before_the_reboot(tmp_path):
    root = set_up_right(tmp_path, mounts=STOCK_MOUNTS + DATA_MOUNT, cmdline="overlayroot=tmpfs " + CMDLINE)
    checks = by_name(check_table_os(root))
    assert checks["read-only root"].ok is True and "next boot" in checks["read-only root"].detail
    assert checks["data partition"].ok is False and checks["data partition"].fix == RECURSE_FIX


def test_overlayroot_conf_recurse_0_is_read_too(tmp_path):
    root = set_up_right(tmp_path, mounts=STOCK_MOUNTS + DATA_MOUNT, cmdline=CMDLINE,
                        dropins={"etc/overlayroot.conf": 'overlayroot="tmpfs:recurse=0"\n',
                                 "etc/systemd/journald.conf.d/mjtable.conf": VOLATILE})
    assert [c.ok for c in check_table_os(root)] == [True, True, True]


def test_an_overlay_switched_off_for_the_next_boot_is_not_ok(tmp_path):
    check = by_name(check_table_os(set_up_right(tmp_path, cmdline=CMDLINE)))["read-only root"]
    assert check.ok is False and "next boot" in check.detail and check.fix == OVERLAY_FIX


def test_bullseye_boot_overlay_in_boot_cmdline_txt_covers_the_root_alone(tmp_path):
    root = set_up_right(tmp_path, cmdline=None, mounts=STOCK_MOUNTS + DATA_MOUNT)
    (root / "boot/cmdline.txt").parent.mkdir(parents=True, exist_ok=True)
    (root / "boot/cmdline.txt").write_text("boot=overlay " + CMDLINE)
    checks = by_name(check_table_os(root))
    root_check = checks["read-only root"]
    assert root_check.ok is True and "boot=overlay in /boot/cmdline.txt" in root_check.detail
    assert checks["data partition"].ok is True                           # its overlay never touches fstab
    (root / "boot/cmdline.txt").write_text(CMDLINE)
    assert by_name(check_table_os(root))["read-only root"].ok is False


def test_a_root_mounted_ro_is_read_only(tmp_path):
    check = by_name(check_table_os(make_root(tmp_path, mounts="/dev/mmcblk0p2 / ext4 ro,noatime 0 0\n")))
    assert check["read-only root"].ok is True and "read-only" in check["read-only root"].detail
    assert check["data partition"].ok is False and "cannot be written" in check["data partition"].detail


def test_journald_drop_ins_win_over_the_main_conf_in_lexical_order(tmp_path):
    root = make_root(tmp_path, journald="[Journal]\nStorage=persistent\n")
    assert by_name(check_table_os(root))["journald"].ok is False
    folder = root / "etc/systemd/journald.conf.d"
    folder.mkdir(parents=True)
    (folder / "10-volatile.conf").write_text("[Journal]\nStorage=volatile\n")
    journald = by_name(check_table_os(root))["journald"]
    assert journald.ok is True and "10-volatile.conf" in journald.detail
    (folder / "90-persistent.conf").write_text("[Journal]\nStorage=persistent\n")
    journald = by_name(check_table_os(root))["journald"]
    assert journald.ok is False and "90-persistent.conf" in journald.detail


def test_a_vendor_drop_in_sorts_with_ours_and_etc_replaces_a_same_named_one(tmp_path):
    vendor = "usr/lib/systemd/journald.conf.d/40-rpi-volatile-storage.conf"
    root = make_root(tmp_path, dropins={vendor: "[Journal]\nStorage=volatile\n",
                                        "etc/systemd/journald.conf.d/30-persistent.conf": "[Journal]\nStorage=auto\n"})
    assert by_name(check_table_os(root))["journald"].ok is True          # 40- sorts after 30-
    (root / "etc/systemd/journald.conf.d/40-rpi-volatile-storage.conf").write_text("")
    assert by_name(check_table_os(root))["journald"].ok is False         # /etc's empty file masks the vendor one


def test_a_capped_persistent_journal_is_ok_and_none_is_not_even_capped(tmp_path):
    root = make_root(tmp_path, journald="[Journal]\nStorage=persistent\nSystemMaxUse=64M\n")
    assert by_name(check_table_os(root))["journald"].ok is True
    (root / "etc/systemd/journald.conf").write_text("[Journal]\nStorage=none\nSystemMaxUse=64M\n")
    journald = by_name(check_table_os(root))["journald"]
    assert journald.ok is False and "no log is kept" in journald.detail


def test_journald_ignores_a_bad_value_and_other_sections(tmp_path):
    root = make_root(tmp_path, journald="[Journal]\nStorage=volatile\n[Other]\nStorage=persistent\n",
                     dropins={"etc/systemd/journald.conf.d/x.conf": "[Journal]\nStorage=Persistent\n"})
    assert by_name(check_table_os(root))["journald"].ok is True


def test_missing_files_mean_cannot_tell_never_a_crash(tmp_path):
    checks = check_table_os(tmp_path)
    assert [c.ok for c in checks] == [None, None, None]
    assert missing(checks) == []
    assert [line.split()[0] for line in format_report(checks).splitlines() if not line.startswith(" ")] == ["?"] * 3


def test_proc_self_mounts_is_read_when_proc_mounts_is_absent(tmp_path):
    root = set_up_right(tmp_path, mounts=None)
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/self/mounts").write_text(OVERLAYROOT_MOUNTS + DATA_MOUNT)
    assert [c.ok for c in check_table_os(root)] == [True, True, True]


def test_octal_escapes_in_mount_points_are_decoded(tmp_path):
    escaped = "/dev/mmcblk0p3 /srv/table\\040data ext4 rw,noatime 0 0\n"
    root = set_up_right(tmp_path, mounts=OVERLAYROOT_MOUNTS + escaped, fstab=STOCK_FSTAB + escaped)
    check = data_check(root, "/srv/table data/db")
    assert check.ok is True and "/srv/table data:" in check.detail
    mount = parse_mount_table("a\\134b /x\\011y ext4 rw 0 0\n")[0]
    assert (mount.device, mount.point) == ("a\\b", "/x\ty")


def test_install_prints_every_check_it_made_with_its_result(tmp_path, capsys):
    """``mjtable install`` said only what was missing, so an administrator could not tell what it had looked at: each
    check now has its line, ok or warn (with what to do) or ? (cannot tell)."""
    import re

    from firmware.cli.main import main

    root = set_up_right(tmp_path, dropins={})                     # the journal left as the image ships it
    assert main(["install", "--config-only", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert f"against power cuts, the operating system under {root} was checked" in out
    assert re.search(r"^  ok +read-only root: / is an overlay", out, re.M), out
    assert re.search(r"^  ok +data partition \(/var/lib/mjtable\): /var/lib/mjtable: ext4", out, re.M), out
    assert re.search(r"^  warn +journald: Storage=auto", out, re.M), out
    assert re.search(r"^ +fix: create /etc/systemd/journald.conf.d/mjtable.conf", out, re.M), out
    bare = tmp_path / "bare"
    bare.mkdir()
    assert main(["install", "--config-only", "--root", str(bare)]) == 0
    out = capsys.readouterr().out
    assert len(re.findall(r"^  \? +", out, re.M)) == 3 and out.count("run the check on the table itself") == 3


def test_install_refuses_a_root_that_does_not_exist_and_creates_nothing(tmp_path, capsys):
    from firmware.cli.main import main

    missing_root = tmp_path / "nonexistent" / "root"
    for extra in (["--config-only"], ["--bundle", str(tmp_path / "none.tar")]):
        assert main(["install", *extra, "--root", str(missing_root)]) == 2
        err = capsys.readouterr().err
        assert err == (f"mjtable: --root {missing_root}: no such folder; give an existing one (/ on a table; to try "
                       f"it, --root $(mktemp -d)); nothing was written\n")
        assert list(tmp_path.iterdir()) == []
    afile = tmp_path / "a-file"
    afile.write_text("x")
    assert main(["install", "--config-only", "--root", str(afile)]) == 2
    assert "not a folder" in capsys.readouterr().err
