"""pydemo: a small Python program for `scripts/demo` to record with
`pystitch record`: it makes a text, counts its words with a regular
expression and a dict, ranks them with a key function (a callback from
C), and renders a report as JSON, for about SECONDS of CPU time
(default 1). Its stacks go through the interpreter, C builtins calling
back into Python, and extension modules."""
import json
import re
import sys
import time

WORD = re.compile(r"[a-z]+")


def make_text(n):
    syllables = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po"]
    return " ".join(syllables[i % 8] + syllables[(i * 7) % 8] + syllables[(i * 3) % 5]
                    for i in range(n))


def count_words(text):
    counts = {}
    for word in WORD.findall(text):
        counts[word] = counts.get(word, 0) + 1
    return counts


def rank(counts):
    return sorted(counts, key=lambda word: (-counts[word], word))


def render(counts, ranked):
    return json.dumps([{"word": word, "count": counts[word]} for word in ranked[:50]])


def report(n):
    counts = count_words(make_text(n))
    return render(counts, rank(counts))


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    end = time.process_time() + seconds
    while time.process_time() < end:
        report(20000)


if __name__ == "__main__":
    main()
