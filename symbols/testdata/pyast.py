# Prints the functions and classes of each Python file named on standard
# input as "path<TAB>name kind start end", qualified as package symbols does.
import ast
import sys


def walk(path, node, stack, parent_kind, out):
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.ClassDef):
            kind = "class"
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            kind = "method" if parent_kind == "class" else "function"
        else:
            walk(path, child, stack, parent_kind, out)
            continue
        name = ".".join(stack + [child.name])
        out.append(f"{path}\t{name} {kind} {child.lineno} {child.end_lineno}")
        walk(path, child, stack + [child.name], kind if kind == "class" else "function", out)


out = []
for line in sys.stdin:
    path = line.strip()
    with open(path, "rb") as f:
        walk(path, ast.parse(f.read()), [], "", out)
print("\n".join(out))
