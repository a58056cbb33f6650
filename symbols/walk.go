//go:build cgo

package symbols

import (
	"bytes"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// role is what a syntax node means to the symbol list.
type role int

const (
	roleNone role = iota
	// roleClass is emitted as a Class and qualifies what it holds.
	roleClass
	// roleFunc is emitted as a Function or Method.
	roleFunc
	// roleScope qualifies what it holds (a Rust impl block) but is not
	// itself a symbol: the type it names is declared elsewhere.
	roleScope
)

// spec says, for one language, which nodes are definitions and how they
// are named.
type spec struct {
	classes map[string]bool
	funcs   map[string]bool
	// classify handles the nodes the two sets cannot: definitions whose
	// name or role depends on their children. It returns roleNone for
	// nodes that are not definitions. It may be nil.
	classify func(n *sitter.Node, kind string, src []byte) (r role, name, qualifier string)
	// descend, when set, lists the only node kinds whose children are
	// visited: definitions cannot occur below the others, and skipping
	// expressions keeps large files fast.
	descend map[string]bool
	// trimComments drops trailing comment lines from a definition's range.
	trimComments bool
}

func set(kinds ...string) map[string]bool {
	m := make(map[string]bool, len(kinds))
	for _, k := range kinds {
		m[k] = true
	}
	return m
}

var jsClasses = []string{"class_declaration", "class"}
var jsFuncs = []string{"function_declaration", "generator_function_declaration", "method_definition"}

// specs is a read-only table.
var specs = map[Language]spec{
	Python: {
		classes: set("class_definition"),
		funcs:   set("function_definition"),
		descend: set("module", "block", "class_definition", "function_definition", "decorated_definition",
			"if_statement", "elif_clause", "else_clause", "try_statement", "except_clause",
			"except_group_clause", "finally_clause", "with_statement", "for_statement",
			"while_statement", "match_statement", "case_clause"),
		trimComments: true,
	},
	Go: {
		classes:  set("type_spec", "type_alias"),
		funcs:    set("function_declaration"),
		classify: classifyGo,
		descend:  set("source_file", "type_declaration"),
	},
	JavaScript: {
		classes:  set(jsClasses...),
		funcs:    set(jsFuncs...),
		classify: classifyJS,
	},
	TypeScript: tsSpec,
	TSX:        tsSpec,
	Java: {
		classes: set("class_declaration", "interface_declaration", "enum_declaration",
			"record_declaration", "annotation_type_declaration"),
		funcs: set("method_declaration", "constructor_declaration", "compact_constructor_declaration"),
	},
	Rust: {
		classes:  set("struct_item", "enum_item", "trait_item", "union_item"),
		funcs:    set("function_item", "function_signature_item"),
		classify: classifyRust,
	},
	Kotlin: {
		classes:  set("class_declaration", "object_declaration"),
		funcs:    set("function_declaration"),
		classify: classifyKotlin,
	},
}

var tsSpec = spec{
	classes: set(append(jsClasses, "abstract_class_declaration", "interface_declaration")...),
	funcs: set(append(jsFuncs, "method_signature", "abstract_method_signature",
		"function_signature")...),
	classify: classifyJS,
}

type frame struct {
	name string
	role role
}

type walker struct {
	spec  spec
	src   []byte
	cur   *sitter.TreeCursor
	stack []frame
	out   []Symbol
}

// walk visits the node under the cursor and its descendants, leaving the
// cursor where it started.
func (w *walker) walk(n *sitter.Node) {
	if n == nil {
		n = w.cur.Node()
	}
	kind := n.Kind()
	r, name, qual := roleNone, "", ""
	switch {
	case w.spec.classes[kind]:
		r, name = roleClass, text(n.ChildByFieldName("name"), w.src)
	case w.spec.funcs[kind]:
		r, name = roleFunc, text(n.ChildByFieldName("name"), w.src)
	case w.spec.classify != nil:
		r, name, qual = w.spec.classify(n, kind, w.src)
	}
	pushed := false
	if r != roleNone && name != "" {
		if r != roleScope {
			w.emit(n, r, name, qual)
		}
		if qual != "" {
			name = qual + "." + name
		}
		w.stack = append(w.stack, frame{name: name, role: r})
		pushed = true
	}
	if w.spec.descend == nil || w.spec.descend[kind] {
		if w.cur.GotoFirstChild() {
			for {
				if c := w.cur.Node(); c.IsNamed() {
					w.walk(c)
				}
				if !w.cur.GotoNextSibling() {
					break
				}
			}
			w.cur.GotoParent()
		}
	}
	if pushed {
		w.stack = w.stack[:len(w.stack)-1]
	}
}

func (w *walker) emit(n *sitter.Node, r role, name, qual string) {
	parts := make([]string, 0, len(w.stack)+2)
	for _, f := range w.stack {
		parts = append(parts, f.name)
	}
	kind := Class
	if r == roleFunc {
		kind = Function
		if qual != "" || (len(w.stack) > 0 && w.stack[len(w.stack)-1].role != roleFunc) {
			kind = Method
		}
	}
	if qual != "" {
		parts = append(parts, qual)
	}
	parts = append(parts, name)
	w.out = append(w.out, Symbol{
		Name:  strings.Join(parts, "."),
		Kind:  kind,
		Start: int(n.StartPosition().Row) + 1,
		End:   w.end(n),
	})
}

// end is the last line of n. For Python it is the last line that is not
// blank or a comment, as Python's ast reports it: tree-sitter counts
// comments after a block's last statement as part of the block.
func (w *walker) end(n *sitter.Node) int {
	end := endLine(n)
	if !w.spec.trimComments {
		return end
	}
	start, stop := int(n.StartByte()), int(n.EndByte())
	if stop > start && w.src[stop-1] == '\n' {
		stop-- // endLine has already left out the line after it
	}
	for end > int(n.StartPosition().Row)+1 {
		i := bytes.LastIndexByte(w.src[start:stop], '\n')
		if i < 0 {
			break
		}
		last := bytes.TrimSpace(w.src[start+i+1 : stop])
		if len(last) > 0 && last[0] != '#' {
			break
		}
		end--
		stop = start + i
	}
	return end
}

// endLine is the last line holding part of n: a node ending at column 0
// ends with the newline of the line before.
func endLine(n *sitter.Node) int {
	p := n.EndPosition()
	if p.Column == 0 && p.Row > n.StartPosition().Row {
		return int(p.Row)
	}
	return int(p.Row) + 1
}

func text(n *sitter.Node, src []byte) string {
	if n == nil {
		return ""
	}
	return string(src[n.StartByte():n.EndByte()])
}

// typeName reduces a type expression to the bare name a method is
// qualified by: *pkg.Server[T] → Server, &'a mut Vec<T> → Vec.
func typeName(s string) string {
	if i := strings.IndexAny(s, "[<("); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimLeft(s, "*&' \t")
	if i := strings.LastIndexAny(s, ".:"); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimPrefix(strings.TrimSpace(s), "mut ")
	return strings.TrimSpace(s)
}

func classifyGo(n *sitter.Node, kind string, src []byte) (role, string, string) {
	if kind != "method_declaration" {
		return roleNone, "", ""
	}
	var recv string
	if params := n.ChildByFieldName("receiver"); params != nil {
		for i := uint(0); i < params.NamedChildCount(); i++ {
			if p := params.NamedChild(i); p.Kind() == "parameter_declaration" {
				recv = typeName(text(p.ChildByFieldName("type"), src))
				break
			}
		}
	}
	return roleFunc, text(n.ChildByFieldName("name"), src), recv
}

// functionValues are the JavaScript expressions that make a variable or
// field a named function.
var functionValues = set("arrow_function", "function_expression", "function", "generator_function")

func classifyJS(n *sitter.Node, kind string, src []byte) (role, string, string) {
	var nameField string
	switch kind {
	case "variable_declarator", "public_field_definition":
		nameField = "name"
	case "field_definition":
		nameField = "property"
	case "pair":
		nameField = "key"
	case "assignment_expression":
		return classifyJSAssignment(n, src)
	default:
		return roleNone, "", ""
	}
	v := n.ChildByFieldName("value")
	if v == nil || !functionValues[v.Kind()] {
		return roleNone, "", ""
	}
	name := n.ChildByFieldName(nameField)
	if name == nil || !(strings.HasSuffix(name.Kind(), "identifier") || name.Kind() == "string") {
		return roleNone, "", ""
	}
	return roleFunc, strings.Trim(text(name, src), `"'`), ""
}

// classifyJSAssignment names the functions of pre-class JavaScript:
// exports.hash = function..., Foo.prototype.send = function... (a method
// of Foo).
func classifyJSAssignment(n *sitter.Node, src []byte) (role, string, string) {
	left, right := n.ChildByFieldName("left"), n.ChildByFieldName("right")
	if left == nil || right == nil || !functionValues[right.Kind()] {
		return roleNone, "", ""
	}
	switch left.Kind() {
	case "identifier":
		return roleFunc, text(left, src), ""
	case "member_expression":
	default:
		return roleNone, "", ""
	}
	name := text(left.ChildByFieldName("property"), src)
	obj := strings.TrimSuffix(text(left.ChildByFieldName("object"), src), ".prototype")
	switch obj = obj[strings.LastIndex(obj, ".")+1:]; obj {
	case "exports", "module", "this", "window", "self", "global", "globalThis":
		obj = ""
	}
	return roleFunc, name, obj
}

func classifyRust(n *sitter.Node, kind string, src []byte) (role, string, string) {
	if kind != "impl_item" {
		return roleNone, "", ""
	}
	return roleScope, typeName(text(n.ChildByFieldName("type"), src)), ""
}

func classifyKotlin(n *sitter.Node, kind string, src []byte) (role, string, string) {
	switch kind {
	case "companion_object":
		name := text(n.ChildByFieldName("name"), src)
		if name == "" {
			name = "Companion"
		}
		return roleClass, name, ""
	case "secondary_constructor":
		return roleFunc, "constructor", ""
	}
	return roleNone, "", ""
}
