"""The package's build: ``config/`` at the top of the checkout ships as the package ``firmware.defaults``."""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["firmware", "firmware.*", "hal", "hal.*", "sim", "sim.*"]) + ["firmware.defaults"],
    package_dir={"firmware.defaults": "config"},
    package_data={"firmware.defaults": ["*/*.toml", "*/*.csv", "systemd/*.service"]},
)
