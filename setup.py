"""The package's build: ``config/`` at the top of the checkout ships as the package ``firmware.defaults``; the web
page's templates, script, styles, icons, tile drawings and message catalogues (the compiled ``.mo`` are committed:
``make i18n``) ship inside ``firmware.web``, the command line's catalogue inside ``firmware.cli``."""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["firmware", "firmware.*", "hal", "hal.*", "sim", "sim.*", "parlour", "parlour.*"]) + ["firmware.defaults"],
    package_dir={"firmware.defaults": "config"},
    package_data={"firmware.defaults": ["*/*.toml", "*/*.csv", "systemd/*.service"],
                  "parlour.store.migrations": ["script.py.mako"],
                  "firmware.web": ["templates/*.html", "static/*.js", "static/*.css", "static/*.svg", "static/*.ico",
                                   "static/tiles/*.svg", "locale/*.pot", "locale/*/LC_MESSAGES/*.po",
                                   "locale/*/LC_MESSAGES/*.mo"],
                  "firmware.cli": ["locale/*.pot", "locale/*/LC_MESSAGES/*.po", "locale/*/LC_MESSAGES/*.mo"]},
)
