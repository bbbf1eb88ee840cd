"""The technician's diagnostics socket: the server the running controller opens, its protocol and client."""
