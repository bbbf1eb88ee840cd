"""Seat winds: each player sits E, S, W and N as evenly as possible (de Werra's equitable colouring)."""

from __future__ import annotations



def balance_winds(tables: list[list[int]], counts: list[list[int]]) -> list[list[int]]:
    """Order each table's 4 players as E, S, W, N so that every player's wind counts are as even as possible.

    ``tables`` are every free table-round; ``counts[p]`` holds the winds p already sat (in fixed rounds) and is
    updated.  A first pass gives each player the wind they sat least; then, while some player p sits wind a at
    least twice more than wind b, an alternating path is sought: p takes b at one of its a-tables, the player who
    sat b there takes a, and so on, until a player who sat b more than a.  Each flip lowers the sum of squared
    counts, so it ends; with no fixed rounds every player's spread ends at most 1 (the players reachable from p
    would otherwise hold more a-seats than b-seats, yet every table has one of each).
    """
    seats: list[list[int]] = []
    for table in tables:
        order = [-1] * 4
        free_winds = [0, 1, 2, 3]
        for p in sorted(table, key=lambda q: -max(counts[q]) + min(counts[q])):
            w = min(free_winds, key=lambda k: (counts[p][k], k))
            free_winds.remove(w)
            order[w] = p
            counts[p][w] += 1
        seats.append(order)
    at: dict[int, list[int]] = {}
    for i, order in enumerate(seats):
        for p in order:
            at.setdefault(p, []).append(i)

    def improve(p: int) -> bool:
        c = counts[p]
        for a in range(4):
            for b in range(4):
                if c[a] - c[b] < 2:
                    continue
                # BFS over players: an arc x -> y where x sits a and y sits b at the same table
                parent: dict[int, tuple[int, int]] = {p: (-1, -1)}
                queue = [p]
                end = -1
                for x in queue:
                    for i in at[x]:
                        order = seats[i]
                        if order[a] != x:
                            continue
                        y = order[b]
                        if y in parent:
                            continue
                        parent[y] = (x, i)
                        if counts[y][a] - counts[y][b] <= -1:
                            end = y
                            break
                        queue.append(y)
                    if end >= 0:
                        break
                if end < 0:
                    continue
                y = end
                while y != p:
                    x, i = parent[y]
                    order = seats[i]
                    order[a], order[b] = y, x
                    counts[x][a] -= 1
                    counts[x][b] += 1
                    counts[y][b] -= 1
                    counts[y][a] += 1
                    y = x
                return True
        return False

    changed = True
    while changed:
        changed = False
        for p in list(at):
            while improve(p):
                changed = True
    return seats
