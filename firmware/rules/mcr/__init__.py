"""MCR / 国粹麻将 (1998 national competition rules): fans, scoring, payments."""
