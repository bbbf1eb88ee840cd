"""Technician diagnostics: the commands a technician may give the running controller, and the socket they come by."""
