"""The table database: the one persistence package that everything the table keeps goes through.

One SQLite file (WAL, ``synchronous=FULL``, 512-byte pages): the bookkeeping,
the walls, the stacking progress, the fault history, the hands, the
scoreboard's rows and the fleet's outbox.  :mod:`.table_store` opens it and
writes in transactions, :mod:`.schema` holds the schema and one migration
per version, :mod:`.records` the typed models rows are read through,
:mod:`.score_rows` the scoreboard's rows and :mod:`.outbox` the events kept
until the broker has them.  It imports nothing above the domain (tiles,
hands, rules): the controller, the game and the services come to it.
"""
