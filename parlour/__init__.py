"""The hall's side of mjtable: tournaments run across the tables."""
