"""How fast the rules are from Python: legal_moves() and push/pop calls per
second over random games, and perft(5) of the start position.

    python speed.py
"""

import random
import time

import agon


def random_positions(count, seed=1842):
    """Positions of random games, `count` of them, with their moves."""
    rng = random.Random(seed)
    positions = []
    while len(positions) < count:
        position = agon.Position()
        for _ in range(120):
            moves = position.legal_moves()
            if not moves or position.outcome() is not None:
                break
            positions.append((position.copy(stack=False), moves))
            position.push(rng.choice(moves))
    return positions[:count]


def rate(calls, seconds):
    return f"{calls / seconds:,.0f} per second ({calls:,} in {seconds:.3f} s)"


def main():
    samples = random_positions(20_000)
    started = time.perf_counter()
    for position, _ in samples:
        position.legal_moves()
    print("legal_moves():", rate(len(samples), time.perf_counter() - started))

    started = time.perf_counter()
    for position, moves in samples:
        move = moves[0]
        position.push(move)
        position.pop()
    print("push + pop (an agon.Move):", rate(len(samples), time.perf_counter() - started))

    started = time.perf_counter()
    for position, moves in samples:
        position.push(str(moves[0]))
        position.pop()
    print("push + pop (move text):", rate(len(samples), time.perf_counter() - started))

    start = agon.Position()
    started = time.perf_counter()
    nodes = start.perft(5)
    seconds = time.perf_counter() - started
    print(f"perft(5): {nodes:,} nodes in {seconds:.3f} s, {nodes / seconds / 1e6:.1f} Mnps")


if __name__ == "__main__":
    main()
