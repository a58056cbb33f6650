package codesearch

import (
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/symbols"
)

// An import is what one import statement names, kept in the index as a
// Chunk of [Index.Imports]: Path the importing file, Name the spec, Start
// its line. A Python spec is "MODULE", "MODULE:NAME" (from MODULE
// import NAME) or "MODULE:NAME:ALIAS" (from MODULE import NAME as ALIAS),
// MODULE keeping a relative import's leading dots; a Go spec
// is the import path; a JavaScript or TypeScript spec is the relative
// path imported. Specs are resolved to files at query time (see
// [repoTables.importGraph]), so that a blob's imports do not depend on
// the path it is met under.
type pyImport struct {
	module, name, alias string
	line                int
}

// spec is the import's spec in the index.
func (im pyImport) spec() string {
	switch {
	case im.name == "":
		return im.module
	case im.alias != "" && im.alias != im.name:
		return im.module + ":" + im.name + ":" + im.alias
	}
	return im.module + ":" + im.name
}

var (
	// pyFromRe and pyImportRe read one logical import line; a doctest or
	// IPython prompt before it (as issues quote code) is skipped.
	pyFromRe   = regexp.MustCompile(`^\s*(?:>>>\s*|\.\.\.\s*|In \[\d+\]:\s*)?from\s+(\.*[\w.]*)\s+import\s+(.+)$`)
	pyImportRe = regexp.MustCompile(`^\s*(?:>>>\s*|\.\.\.\s*|In \[\d+\]:\s*)?import\s+([\w.]+.*)$`)
	goImportRe = regexp.MustCompile(`^\s*(?:import\s+)?(?:[\w.]+\s+)?"([^"\s]+)"`)
	jsImportRe = regexp.MustCompile(`(?:\bfrom\s+|\brequire\(\s*|\bimport\s*\(?\s*)['"](\.{1,2}/[^'"\s]+)['"]`)
	pyIdentRe  = regexp.MustCompile(`^[A-Za-z_]\w*$`)
	pyModuleRe = regexp.MustCompile(`^[A-Za-z_][\w.]*$`)
	// parensToSpaces turns "from a import (b, c)" into a plain list; one
	// Replacer for every file (making one per import line cost 1 % of a
	// cold run).
	parensToSpaces = strings.NewReplacer("(", " ", ")", " ")
)

// pyImports reads the import statements of Python source: "import a.b
// as c", "from .a import (b, c as d)", continued lines included.
func pyImports(src string) []pyImport {
	var out []pyImport
	// The lines as strings.Split(src, "\n") gives them, without making
	// the slice of every line of every file (see lineAt).
	nLines := strings.Count(src, "\n") + 1
	off := 0 // where line i+1 starts
	next := func() string {
		line, rest := lineAt(src, off)
		off = rest
		return line
	}
	for i := 0; i < nLines; i++ {
		line := next()
		t := strings.TrimSpace(line)
		t = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(t, ">>>"), "..."))
		if !strings.HasPrefix(t, "import") && !strings.HasPrefix(t, "from") && !strings.HasPrefix(t, "In [") {
			continue
		}
		at := i + 1
		// A parenthesized list or a backslash continues the statement.
		for j := 0; j < 50 && i+1 < nLines; j++ {
			open := strings.Count(line, "(") > strings.Count(line, ")")
			if !open && !strings.HasSuffix(strings.TrimRight(line, " \t\r"), "\\") {
				break
			}
			i++
			line = strings.TrimSuffix(strings.TrimRight(line, " \t\r"), "\\") + " " + next()
		}
		if k := strings.IndexByte(line, '#'); k >= 0 {
			line = line[:k]
		}
		line = strings.TrimSpace(line)
		if m := pyFromRe.FindStringSubmatch(line); m != nil {
			mod := m[1]
			if mod == "" || strings.Trim(mod, ".") != "" && !pyModuleRe.MatchString(strings.TrimLeft(mod, ".")) {
				continue
			}
			names := parensToSpaces.Replace(m[2])
			for _, n := range strings.Split(names, ",") {
				name, alias := importedName(n)
				if name == "*" || pyIdentRe.MatchString(name) {
					out = append(out, pyImport{module: mod, name: name, alias: alias, line: at})
				}
			}
			continue
		}
		if m := pyImportRe.FindStringSubmatch(line); m != nil {
			for _, n := range strings.Split(m[1], ",") {
				mod, alias := importedName(n)
				if pyModuleRe.MatchString(mod) {
					out = append(out, pyImport{module: mod, alias: alias, line: at})
				}
			}
		}
	}
	return out
}

// lineAt returns the line of src starting at off, without its newline,
// and where the next one starts.
func lineAt(src string, off int) (line string, next int) {
	if k := strings.IndexByte(src[off:], '\n'); k >= 0 {
		return src[off : off+k], off + k + 1
	}
	return src[off:], len(src)
}

// importedName reads "a as b" (alias b) or "a" (no alias); anything
// else, an alias that is no identifier included, is no import.
func importedName(s string) (name, alias string) {
	f := strings.Fields(s)
	switch {
	case len(f) == 3 && f[1] == "as" && pyIdentRe.MatchString(f[2]):
		return f[0], f[2]
	case len(f) == 1:
		return f[0], ""
	}
	return "", ""
}

// fileImports returns the specs of the imports of one file of the index,
// as Chunks of the file (see [pyImport]).
func fileImports(file, src string) []Chunk {
	var out []Chunk
	switch symbols.LanguageOf(file) {
	case symbols.Python:
		for _, im := range pyImports(src) {
			out = append(out, Chunk{Path: file, Name: im.spec(), Start: im.line})
		}
	case symbols.Go:
		inBlock := false
		for i, line := range strings.Split(src, "\n") {
			t := strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(t, "import ("):
				inBlock = true
				continue
			case inBlock && strings.HasPrefix(t, ")"):
				inBlock = false
			case inBlock || strings.HasPrefix(t, "import "):
				if m := goImportRe.FindStringSubmatch(t); m != nil {
					out = append(out, Chunk{Path: file, Name: m[1], Start: i + 1})
				}
			}
		}
	case symbols.JavaScript, symbols.TypeScript:
		for i, line := range strings.Split(src, "\n") {
			if !strings.Contains(line, "import") && !strings.Contains(line, "require") && !strings.Contains(line, "from") {
				continue
			}
			for _, m := range jsImportRe.FindAllStringSubmatch(line, -1) {
				out = append(out, Chunk{Path: file, Name: m[1], Start: i + 1})
			}
		}
	}
	return out
}

// importGraph is the files each file imports and is imported by, and what
// names a Python file takes from which file (to follow re-exports).
type importGraph struct {
	out, in map[string][]string
	// from maps a file and a name it imports (the name as the file
	// knows it) to where it takes it from (a file and the name there);
	// star the files a file imports * from.
	from map[[2]string][][2]string
	star map[string][]string
}

// importGraph resolves the index's imports to files (once per index).
func (t *repoTables) importGraph(ix *Index) *importGraph {
	t.graphOnce.Do(func() {
		g := &importGraph{out: map[string][]string{}, in: map[string][]string{},
			from: map[[2]string][][2]string{}, star: map[string][]string{}}
		seen := map[[2]string]bool{}
		edge := func(a, b string) {
			if a == b || seen[[2]string{a, b}] {
				return
			}
			seen[[2]string{a, b}] = true
			g.out[a] = append(g.out[a], b)
			g.in[b] = append(g.in[b], a)
		}
		// The files of each module, looked up once: the files of a
		// repository import the same modules over and over.
		modFiles := map[[2]string][]string{}
		moduleFiles := func(mod, name string) []string {
			k := [2]string{mod, name}
			fs, ok := modFiles[k]
			if !ok {
				if name != "" {
					mod += "." + name
				}
				fs = t.pyModuleFiles(mod)
				modFiles[k] = fs
			}
			return fs
		}
		for _, im := range ix.Imports {
			switch symbols.LanguageOf(im.Path) {
			case symbols.Python:
				mod, name, _ := strings.Cut(im.Name, ":")
				name, alias, _ := strings.Cut(name, ":")
				if alias == "" {
					alias = name
				}
				mod = t.absModule(im.Path, mod)
				if mod == "" {
					continue
				}
				var targets []string
				if name != "" && name != "*" {
					// from a import b: b may be a module a/b.py.
					targets = moduleFiles(mod, name)
				}
				if len(targets) == 0 {
					targets = moduleFiles(mod, "")
					for _, f := range targets {
						if name == "*" {
							g.star[im.Path] = append(g.star[im.Path], f)
						} else if name != "" {
							k := [2]string{im.Path, alias}
							g.from[k] = append(g.from[k], [2]string{f, name})
						}
					}
				}
				for _, f := range targets {
					edge(im.Path, f)
				}
			case symbols.Go:
				for _, f := range t.goPackageFiles(im.Name) {
					edge(im.Path, f)
				}
			default:
				p := path.Join(path.Dir(im.Path), im.Name)
				for _, cand := range []string{p, p + ".js", p + ".ts", p + ".tsx", p + ".jsx", p + "/index.js", p + "/index.ts"} {
					if _, ok := t.chunks[cand]; ok {
						edge(im.Path, cand)
						break
					}
				}
			}
		}
		t.graph = g
	})
	return t.graph
}

// absModule turns a relative module (..a) of file into a dotted path from
// the repository's root; an absolute one is returned as it is.
func (t *repoTables) absModule(file, mod string) string {
	rest := strings.TrimLeft(mod, ".")
	level := len(mod) - len(rest)
	if level == 0 {
		return mod
	}
	dir := path.Dir(file)
	for range level - 1 {
		if dir == "." || dir == "/" {
			return ""
		}
		dir = path.Dir(dir)
	}
	parts := []string{}
	if dir != "." {
		parts = strings.Split(dir, "/")
	}
	if rest != "" {
		parts = append(parts, strings.Split(rest, ".")...)
	}
	return strings.Join(parts, ".")
}

// pyModuleFiles returns the file of a dotted module (a.b → a/b.py or
// a/b/__init__.py), matched as a whole path or a whole suffix of one
// (a package under src/); a module found in more than three places is
// ambiguous and resolves to none.
func (t *repoTables) pyModuleFiles(mod string) []string {
	if mod == "" {
		return nil
	}
	p := strings.ReplaceAll(mod, ".", "/")
	for _, cand := range []string{p + ".py", p + "/__init__.py"} {
		var out []string
		for _, f := range t.suffixes[cand] {
			if f == cand || len(f) > len(cand) && f[len(f)-len(cand)-1] == '/' && strings.HasSuffix(f, cand) {
				out = append(out, f)
			}
		}
		if len(out) > 0 && len(out) <= 3 {
			return out
		}
	}
	return nil
}

// goPackageFiles returns the non-test Go files of the package an import
// path names: the directory that is the longest suffix of it.
func (t *repoTables) goPackageFiles(imp string) []string {
	for p := imp; p != ""; {
		if fs := t.dirs[p]; len(fs) > 0 {
			var out []string
			for _, f := range fs {
				if path.Ext(f) == ".go" && !strings.HasSuffix(f, "_test.go") {
					out = append(out, f)
				}
			}
			return out
		}
		_, rest, ok := strings.Cut(p, "/")
		if !ok {
			return nil
		}
		p = rest
	}
	return nil
}

// definingFiles returns the files that define name as reached from file:
// the file itself when it defines name at its top level, else the files
// it imports name from or imports * from, followed up to depth steps.
func (t *repoTables) definingFiles(ix *Index, g *importGraph, file, name string, depth int) []string {
	if t.definesTop(file, name) {
		return []string{file}
	}
	if depth == 0 {
		return nil
	}
	var out []string
	for _, src := range g.from[[2]string{file, name}] {
		f, orig := src[0], src[1]
		out = append(out, t.definingFiles(ix, g, f, orig, depth-1)...)
	}
	if len(out) > 0 {
		return out
	}
	for _, f := range g.star[file] {
		out = append(out, t.definingFiles(ix, g, f, name, depth-1)...)
	}
	return out
}

// definesTop reports whether file defines name at its top level (a
// function or class, or a method Class.name's class).
func (t *repoTables) definesTop(file, name string) bool {
	for _, id := range t.defs[name] {
		d := t.defList[id]
		if d.path == file && !strings.Contains(d.name, ".") {
			return true
		}
	}
	return false
}

// called ranks the files (and functions) defining what the query's code
// reaches through a module it names: the names its import statements
// take from a module, and dotted uses (alias.name, package.module.name),
// aliases expanded. Each is followed through re-exports to the file
// defining it, in the order the query names them.
func (t *repoTables) called(ix *Index, is *issue, chunkOf map[string]Chunk) (files, funcs ranked) {
	files, funcs = ranked{}, ranked{}
	g := t.importGraph(ix)
	aliases := map[string]string{} // a local name → the dotted path it stands for
	var uses [][]string
	for _, im := range is.imports {
		if strings.HasPrefix(im.module, ".") {
			continue // relative to a file the query does not name
		}
		switch {
		case im.name == "":
			if im.alias != "" {
				aliases[im.alias] = im.module
			}
		case im.name != "*":
			local := im.alias
			if local == "" {
				local = im.name
			}
			aliases[local] = im.module + "." + im.name
			uses = append(uses, append(strings.Split(im.module, "."), im.name))
		}
	}
	for _, m := range is.modules {
		parts := strings.Split(m, ".")
		if full, ok := aliases[parts[0]]; ok {
			parts = append(strings.Split(full, "."), parts[1:]...)
		}
		uses = append(uses, parts)
	}
	n := 0
	for _, parts := range uses {
		// The longest prefix that is a module of the repository; the part
		// after it is what the query takes from it. A whole module is the
		// paths signal's.
		if len(t.pyModuleFiles(strings.Join(parts, "."))) > 0 {
			continue
		}
		for k := len(parts) - 1; k >= 1; k-- {
			mods := t.pyModuleFiles(strings.Join(parts[:k], "."))
			if len(mods) == 0 {
				continue
			}
			name := parts[k]
			var defs []string
			for _, f := range mods {
				defs = append(defs, t.definingFiles(ix, g, f, name, 4)...)
			}
			if len(defs) == 0 {
				break
			}
			n++
			for _, f := range defs {
				if _, ok := files[f]; !ok {
					files[f] = 1 / float64(n)
				}
				qual := name
				if k+1 < len(parts) {
					qual = name + "." + parts[k+1]
				}
				for _, q := range []string{qual, name} {
					if c, ok := t.defChunk(ix, f, q); ok {
						id := c.Path + ":" + c.Name
						if _, ok := funcs[id]; !ok {
							funcs[id], chunkOf[id] = 1/float64(n), c
						}
						break
					}
				}
			}
			break
		}
	}
	return files, funcs
}

// defChunk returns the function chunk of file named q (a function, or
// Class.method).
func (t *repoTables) defChunk(ix *Index, file, q string) (Chunk, bool) {
	last := q[strings.LastIndexByte(q, '.')+1:]
	key := q
	if !strings.Contains(q, ".") {
		key = last
	}
	for _, id := range t.defs[key] {
		d := t.defList[id]
		if d.path == file && d.chunk >= 0 && (d.name == q || strings.HasSuffix(d.name, "."+q)) {
			return ix.Chunks[d.chunk], true
		}
	}
	return Chunk{}, false
}

// neighbours ranks the files that import, or are imported by, the files
// the query names (its paths, modules, frames and what its code calls):
// the code around what the issue names. Files with no BM25 score are
// left out.
func (t *repoTables) neighbours(ix *Index, is *issue, bm ranked) ranked {
	g := t.importGraph(ix)
	seeds := map[string]bool{}
	for _, f := range is.frames {
		for _, p := range t.resolvePath(f.path) {
			seeds[p] = true
		}
	}
	for _, p := range is.paths {
		for _, f := range t.resolvePath(p) {
			seeds[f] = true
		}
	}
	for _, m := range is.modules {
		for _, f := range t.resolveModule(m) {
			seeds[f] = true
		}
	}
	called, _ := t.called(ix, is, map[string]Chunk{})
	for f := range called {
		seeds[f] = true
	}
	// A seed linked to many files (a utils module every file imports)
	// says little about each: a neighbour weighs 1/(the seed's links),
	// summed over its seeds; its BM25 score breaks ties.
	// Seeds in order: the sums are then the same whatever a map's order.
	order := make([]string, 0, len(seeds))
	for s := range seeds {
		order = append(order, s)
	}
	sort.Strings(order)
	out := ranked{}
	for _, s := range order {
		links := append(append([]string(nil), g.out[s]...), g.in[s]...)
		for _, f := range links {
			if score, ok := bm[f]; ok && !seeds[f] {
				out[f] += 1/float64(len(links)) + score*1e-9
			}
		}
	}
	return out
}
