// Package importcheck owns the module's one layering check: every package states in its
// doc comment, in one sentence of a fixed form, which of agbench's packages it may import,
// and Check fails a package that imports any other, or that states no such sentence.
//
// The sentence starts a line of the package's doc comment (an indented line, like the
// examples here, does not count) and ends with a period, on that line or a later one of
// its paragraph:
//
//	Imports from agbench: only internal/agerr, internal/result.
//	Imports from agbench: none.
//
// Paths are relative to the module; a path ending in "/..." stands for that folder and
// every package under it. Only the package's own files count (not its tests).
// The test of this package runs the check over the whole module, together with the rules
// of DESIGN.md that hold across packages; tests only import it.
//
// Imports from agbench: none.
package importcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
)

// Sentence is how the rule's sentence begins.
const Sentence = "Imports from agbench:"

var errNoRule = errors.New("its doc comment states no layering rule")

// Package is what the check needs of one package of the module. The module's paths are
// relative to it ("internal/result").
type Package struct {
	Path      string
	Doc       string   // the package's doc comment, from all its files
	Imports   []string // the module's packages it imports
	Deps      []string // the module's packages it depends on, directly or not
	OtherDeps []string // the standard library's and other modules' packages it depends on
	// OtherImports are the standard library's and other modules' packages it imports.
	OtherImports []string
}

// Rule is what a package's sentence allows: None, or the paths in Only.
type Rule struct {
	None bool
	Only []string
}

// Allows reports whether the rule lets a package import path (relative to the module).
func (r Rule) Allows(path string) bool {
	for _, p := range r.Only {
		if p == path || strings.HasSuffix(p, "/...") && Under(path, strings.TrimSuffix(p, "/...")) {
			return true
		}
	}
	return false
}

// ParseRule finds the sentence in a doc comment and reads it. It fails when the doc comment
// has no such sentence, more than one, or one that is not of the fixed form.
func ParseRule(doc string) (Rule, error) {
	var lines []string
	all := strings.Split(doc, "\n")
	for i, l := range all {
		if !strings.HasPrefix(l, Sentence) { // an indented example is not the rule
			continue
		}
		// The sentence may go on over the next lines of its paragraph, up to its period.
		for l = strings.TrimSpace(l); !strings.HasSuffix(l, ".") && i+1 < len(all); i++ {
			next := all[i+1]
			if strings.TrimSpace(next) == "" || strings.HasPrefix(next, " ") || strings.HasPrefix(next, "\t") {
				break
			}
			l += " " + strings.TrimSpace(next)
		}
		lines = append(lines, l)
	}
	switch len(lines) {
	case 0:
		return Rule{}, fmt.Errorf("%w (a line %q)", errNoRule, Sentence+" only internal/x, internal/y.")
	case 1:
	default:
		return Rule{}, fmt.Errorf("its doc comment states %d layering rules; want one", len(lines))
	}
	body := strings.TrimSpace(strings.TrimPrefix(lines[0], Sentence))
	if !strings.HasSuffix(body, "/...") {
		body = strings.TrimSuffix(body, ".")
	}
	if body == "none" {
		return Rule{None: true}, nil
	}
	list, ok := strings.CutPrefix(body, "only ")
	if !ok {
		return Rule{}, fmt.Errorf("%q: want %q or %q", lines[0], Sentence+" none.", Sentence+" only internal/x, internal/y.")
	}
	var r Rule
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		if p == "" || strings.ContainsAny(p, " \t") || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
			return Rule{}, fmt.Errorf("%q: %q is not a package path of the module", lines[0], p)
		}
		r.Only = append(r.Only, p)
	}
	return r, nil
}

// Violation is one package that breaks the layering check: it states no rule (NoRule), a
// malformed one, or imports what its rule does not allow (Import).
type Violation struct {
	Package string
	Import  string // the import its rule does not allow; empty for a fault of the rule itself
	NoRule  bool
	Reason  string
}

func (v Violation) Error() string { return v.Package + ": " + v.Reason }

// Check returns a Violation for every package of pkgs that states no rule or a malformed
// one, allows a path that is no package of pkgs, or imports what its rule does not allow.
func Check(pkgs []Package) []Violation {
	known := map[string]bool{}
	for _, p := range pkgs {
		known[p.Path] = true
	}
	var out []Violation
	for _, p := range pkgs {
		r, err := ParseRule(p.Doc)
		if err != nil {
			out = append(out, Violation{Package: p.Path, NoRule: errors.Is(err, errNoRule), Reason: err.Error()})
			continue
		}
		for _, a := range r.Only {
			if !known[a] && !coversAny(a, known) {
				out = append(out, Violation{Package: p.Path, Reason: "its rule allows " + a + ", which is no package of the module"})
			}
		}
		for _, imp := range p.Imports {
			if !r.Allows(imp) {
				out = append(out, Violation{Package: p.Path, Import: imp,
					Reason: fmt.Sprintf("imports %s, which its doc comment does not allow (%s)", imp, ruleText(r))})
			}
		}
	}
	return out
}

// Under reports whether path is dir or a package in a folder under dir.
func Under(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

func coversAny(pattern string, known map[string]bool) bool {
	if !strings.HasSuffix(pattern, "/...") {
		return false
	}
	for k := range known {
		if (Rule{Only: []string{pattern}}).Allows(k) {
			return true
		}
	}
	return false
}

func ruleText(r Rule) string {
	if r.None {
		return Sentence + " none"
	}
	return Sentence + " only " + strings.Join(r.Only, ", ")
}

// listed is the part of `go list -json` that Load reads.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
	Deps       []string
	Module     *struct{ Path string }
	Error      *struct{ Err string }
}

// Load lists every package of the Go module in dir (`go list -json ./...`) with its doc
// comment, read from all its non-test files.
func Load(dir string) ([]Package, error) {
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %v: %s", dir, err, stderr.String())
	}
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var l listed
		if err := dec.Decode(&l); err != nil {
			return nil, err
		}
		if l.Error != nil {
			return nil, fmt.Errorf("%s: %s", l.ImportPath, l.Error.Err)
		}
		if l.Module == nil {
			return nil, fmt.Errorf("%s: not in a module", l.ImportPath)
		}
		p, err := fromListed(l, l.Module.Path)
		if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		return nil, errors.New("go list found no packages in " + dir)
	}
	return pkgs, nil
}

func fromListed(l listed, module string) (Package, error) {
	rel := func(path string) (string, bool) {
		if path == module {
			return ".", true
		}
		return strings.CutPrefix(path, module+"/")
	}
	p := Package{Path: l.ImportPath}
	if r, ok := rel(l.ImportPath); ok {
		p.Path = r
	}
	for _, imp := range l.Imports {
		if r, ok := rel(imp); ok {
			p.Imports = append(p.Imports, r)
		} else {
			p.OtherImports = append(p.OtherImports, imp)
		}
	}
	for _, d := range l.Deps {
		if r, ok := rel(d); ok {
			p.Deps = append(p.Deps, r)
		} else {
			p.OtherDeps = append(p.OtherDeps, d)
		}
	}
	var docs []string
	for _, f := range append(append([]string(nil), l.GoFiles...), l.CgoFiles...) {
		af, err := parser.ParseFile(token.NewFileSet(), filepath.Join(l.Dir, f), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return Package{}, err
		}
		if af.Doc != nil {
			docs = append(docs, af.Doc.Text())
		}
	}
	p.Doc = strings.Join(docs, "\n")
	return p, nil
}
