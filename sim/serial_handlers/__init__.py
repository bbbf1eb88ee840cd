"""pyserial URL handlers of the simulator (rfidsim://)."""
