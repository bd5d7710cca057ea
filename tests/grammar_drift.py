#!/usr/bin/env python3
"""grammar/npy_header.peg and grammar/npy_header.hpp say the same thing.

The C++ drift test (tests/test_grammar.cpp) compares rule names, their
order and the rules each one uses. This one compares everything: both files
are parsed into the same expression trees (sequence, choice, repetition,
predicates, cut, and every literal and character class as its exact set of
bytes), normalised (a choice of single bytes is one byte set, '!.' is the end
of input), and compared rule by rule. A self-test first checks that a changed
operator, bound or literal in a copy of the PEG is caught.
Exit 0 when they agree.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
ESCAPES = {"\\": 0x5C, "'": 0x27, '"': 0x22, "t": 0x09, "n": 0x0A, "r": 0x0D, "0": 0x00}


# --------------------------------------------------------------------- PEG
def peg_tokens(body):
    tokens, i = [], 0
    while i < len(body):
        c = body[i]
        if c.isspace():
            i += 1
        elif c in "'\"":
            j, value = i + 1, []
            while body[j] != c:
                if body[j] == "\\":
                    value.append(ESCAPES[body[j + 1]])
                    j += 2
                else:
                    value.append(ord(body[j]))
                    j += 1
            tokens.append(("lit", bytes(value)))
            i = j + 1
        elif c == "[":
            j, members = i + 1, set()
            def one(k):
                if body[k] == "\\" and body[k + 1] == "x":
                    return int(body[k + 2:k + 4], 16), k + 4
                if body[k] == "\\":
                    return ESCAPES[body[k + 1]], k + 2
                return ord(body[k]), k + 1
            while body[j] != "]":
                low, j = one(j)
                high = low
                if body[j] == "-" and body[j + 1] != "]":
                    high, j = one(j + 1)
                members.update(range(low, high + 1))
            tokens.append(("set", frozenset(members)))
            i = j + 1
        elif c == "{":
            j = body.index("}", i)
            tokens.append(("count", int(body[i + 1:j])))
            i = j + 1
        elif c.isalpha() or c == "_":
            j = i
            while j < len(body) and (body[j].isalnum() or body[j] == "_"):
                j += 1
            tokens.append(("ref", body[i:j]))
            i = j
        else:
            tokens.append(("op", c))
            i += 1
    return tokens


class PegParser:
    def __init__(self, tokens):
        self.tokens, self.at = tokens, 0

    def peek(self):
        return self.tokens[self.at] if self.at < len(self.tokens) else ("end", None)

    def take(self):
        token = self.peek()
        self.at += 1
        return token

    def alternatives(self):
        options = [self.sequence()]
        while self.peek() == ("op", "/"):
            self.take()
            options.append(self.sequence())
        return ("alt", tuple(options))

    def sequence(self):
        items = []
        while self.peek()[0] not in ("end",) and self.peek() not in (("op", "/"), ("op", ")")):
            items.append(self.prefixed())
        return ("seq", tuple(items))

    def prefixed(self):
        if self.peek() in (("op", "!"), ("op", "^")):
            op = self.take()[1]
            return ("not" if op == "!" else "must", self.suffixed())
        return self.suffixed()

    def suffixed(self):
        node = self.primary()
        while True:
            kind, value = self.peek()
            if (kind, value) in (("op", "*"), ("op", "+"), ("op", "?")):
                self.take()
                node = ({"*": "star", "+": "plus", "?": "opt"}[value], node)
            elif kind == "count":
                self.take()
                node = ("rep", value, node)
            else:
                return node

    def primary(self):
        kind, value = self.take()
        if kind in ("ref", "set"):
            return (kind, value)
        if kind == "lit":
            return ("set", frozenset(value)) if len(value) == 1 else ("lit", value)
        if (kind, value) == ("op", "."):
            return ("any",)
        if (kind, value) == ("op", "("):
            node = self.alternatives()
            assert self.take() == ("op", ")")
            return node
        raise ValueError(f"unexpected PEG token {kind} {value!r}")


def peg_rules(text):
    rules = []
    for line in text.splitlines():
        if line.startswith("#") or "<-" not in line:
            continue
        name, body = line.split("<-", 1)
        body = re.sub(r"\s#\s.*$", "", body)  # a trailing comment
        parser = PegParser(peg_tokens(body))
        node = parser.alternatives()
        assert parser.peek()[0] == "end", line
        rules.append((name.strip(), node))
    return rules


# ------------------------------------------------------------------ PEGTL
def cpp_tokens(text):
    return re.findall(r"'(?:\\.|[^'])'|0x[0-9A-Fa-f]+|\d+|[A-Za-z_][A-Za-z_0-9]*(?:::[A-Za-z_][A-Za-z_0-9]*)*|[<>,]",
                      text)


def cpp_value(token):
    if token.startswith("'"):
        inner = token[1:-1]
        return ESCAPES[inner[1]] if inner.startswith("\\") else ord(inner)
    return int(token, 0)


def cpp_expression(tokens, at):
    name = tokens[at]
    at += 1
    if at >= len(tokens) or tokens[at] != "<":
        if name == "digit":
            return ("set", frozenset(range(0x30, 0x3A))), at
        if name == "eof":
            return ("eof",), at
        return ("ref", name), at
    at += 1
    args = []
    while tokens[at] != ">":
        if tokens[at].startswith("'") or tokens[at][0].isdigit():
            args.append(cpp_value(tokens[at]))
            at += 1
        else:
            node, at = cpp_expression(tokens, at)
            args.append(node)
        if tokens[at] == ",":
            at += 1
    at += 1
    return combinator(name, args), at


def combinator(name, args):
    def group(items):
        return ("seq", tuple(items))
    if name == "one":
        return ("set", frozenset(args))
    if name in ("range", "uint8::range", "ranges"):
        members = set()
        pairs = list(args)
        while len(pairs) >= 2:
            members.update(range(pairs[0], pairs[1] + 1))
            pairs = pairs[2:]
        members.update(pairs)
        return ("set", frozenset(members))
    if name == "string":
        return ("set", frozenset(args)) if len(args) == 1 else ("lit", bytes(args))
    if name == "seq":
        return group(args)
    if name == "sor":
        return ("alt", tuple(args))
    if name in ("star", "plus", "opt"):
        return (name, group(args))
    if name == "not_at":
        return ("not", group(args))
    if name == "must":
        return group([("must", arg) for arg in args])
    if name == "rep":
        return ("rep", args[0], group(args[1:]))
    raise ValueError(f"unknown PEGTL combinator {name}")


def pegtl_rules(text):
    begin = text.index("// clang-format off")
    end = text.index("// clang-format on", begin)
    rules = []
    for line in text[begin:end].splitlines():
        match = re.match(r"struct (\w+) : (.*) \{\};$", line)
        if match:
            node, at = cpp_expression(cpp_tokens(match.group(2)), 0)
            rules.append((match.group(1), node))
    return rules


# -------------------------------------------------------------- normalise
def normal(node):
    kind = node[0]
    if kind in ("seq", "alt"):
        items = []
        for item in (normal(child) for child in node[1]):
            items.extend(item[1] if item[0] == kind else [item])  # flatten
        if kind == "alt" and items and all(item[0] == "set" for item in items):
            return ("set", frozenset().union(*(item[1] for item in items)))
        return items[0] if len(items) == 1 else (kind, tuple(items))
    if kind == "not":
        inner = normal(node[1])
        return ("eof",) if inner == ("any",) else ("not", inner)
    if kind in ("star", "plus", "opt", "must"):
        return (kind, normal(node[1]))
    if kind == "rep":
        return ("rep", node[1], normal(node[2]))
    return node


def differences(peg, pegtl):
    problems = []
    if [name for name, _ in peg] != [name for name, _ in pegtl]:
        problems.append("the rule names or their order differ")
    for (name, a), (_, b) in zip(peg, pegtl):
        if normal(a) != normal(b):
            problems.append(f"rule {name}: PEG {normal(a)} != PEGTL {normal(b)}")
    return problems


def main():
    peg_text = (ROOT / "grammar" / "npy_header.peg").read_text(encoding="utf-8")
    peg = peg_rules(peg_text)
    pegtl = pegtl_rules((ROOT / "grammar" / "npy_header.hpp").read_text(encoding="utf-8"))
    mutations = [("(comma sep value sep)*", "(comma sep value sep)+"), ("[\\x5D-\\x7F]", "[\\x5D-\\x7E]"),
                 ("'True'", "'Ture'"), ("hex_digit{2}", "hex_digit{3}"), ("^escape_hex2", "escape_hex2"),
                 ("sep !.", "sep .")]
    for old, new in mutations:
        assert old in peg_text, old
        if not differences(peg_rules(peg_text.replace(old, new, 1)), pegtl):
            print(f"grammar drift self-test: changing {old!r} to {new!r} went unnoticed")
            return 1
    problems = differences(peg, pegtl)
    for problem in problems:
        print(problem)
    print(f"grammar drift: {len(peg)} rules compared in full, {len(mutations)} mutations caught, "
          f"{len(problems)} differences")
    return 1 if problems or len(peg) < 40 else 0


if __name__ == "__main__":
    sys.exit(main())
