"""The table's web page for technicians and parlour staff: a process of its own, a client of the control socket.

``mjtable web`` serves it (``firmware/cli/web_cmd.py``; the unit
``mjtable-web.service`` runs it as its own user, without GPIO or serial
access).  It reads the live status by subscribing to the controller's
socket (:mod:`firmware.diagnostics.socket.subscriptions`), the scoreboard and fault history
from the table database opened read-only, and sends acknowledges, service
tests and jogs over the socket, where the controller's own checks (service
mode, interlocks) decide.  Nothing here can stall the controller's loop.
"""
