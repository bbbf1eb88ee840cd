"""mjtable: the firmware of an automatic mahjong table (controller, mechanisms, reader, rules, game)."""

__version__ = "0.2.0"
