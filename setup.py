"""The package's build: ``config/`` at the top of the checkout ships as the package ``firmware.defaults``; the web
page's templates, script, styles and tile drawings ship inside ``firmware.web``."""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["firmware", "firmware.*", "hal", "hal.*", "sim", "sim.*"]) + ["firmware.defaults"],
    package_dir={"firmware.defaults": "config"},
    package_data={"firmware.defaults": ["*/*.toml", "*/*.csv", "systemd/*.service"],
                  "firmware.web": ["templates/*.html", "static/*.js", "static/*.css", "static/tiles/*.svg"]},
)
