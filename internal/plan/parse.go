package plan

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agbench/agbench/internal/agerr"
)

// Error is one problem of a plan file, at a line and column.
type Error struct {
	File string
	Pos  Pos
	Msg  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Pos.Line, e.Pos.Column, e.Msg)
}

// parser collects every problem of a file, so that all are reported at once.
type parser struct {
	file string
	errs []error
}

func (p *parser) errorf(n *yaml.Node, format string, a ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Pos: posOf(n), Msg: fmt.Sprintf(format, a...)})
}

func posOf(n *yaml.Node) Pos {
	if n == nil {
		return Pos{1, 1}
	}
	return Pos{Line: max(n.Line, 1), Column: max(n.Column, 1)}
}

// Parse reads a plan file's bytes. Every problem of its shape (syntax, unknown or missing
// keys, wrong types, bad values) is reported, each with its line and column, as one bad
// input error; commands and flags are checked by Check.
func Parse(file string, data []byte) (*Plan, error) {
	p := &parser{file: file}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, agerr.BadInput(p.syntax(err, data))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		p.errorf(&doc, "the plan is empty: give a target and experiments")
		return nil, agerr.Join(agerr.BadInput(p.errs[0]))
	}
	pl := &Plan{File: file, Results: DefaultResults, Report: DefaultReport}
	root := doc.Content[0]
	if p.mapping(root, "the plan") {
		p.plan(root, pl)
	}
	if pl.Name == "" {
		pl.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		if !nameRE.MatchString(pl.Name) {
			pl.Name = "plan"
		}
	}
	if len(p.errs) > 0 {
		bad := make([]error, len(p.errs))
		for i, e := range p.errs {
			bad[i] = agerr.BadInput(e)
		}
		return nil, agerr.Join(bad...)
	}
	return pl, nil
}

// syntax turns yaml's error ("yaml: line 3: ...") into a positioned one. An error yaml
// gives no line for is one the parser met at the end of the input: the last line.
func (p *parser) syntax(err error, data []byte) error {
	msg := err.Error()
	line := max(1, len(strings.Split(strings.TrimRight(string(data), "\n"), "\n")))
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	rest := strings.TrimPrefix(msg, "yaml: ")
	if s, ok := strings.CutPrefix(rest, "line "); ok {
		if n, tail, ok := strings.Cut(s, ":"); ok {
			if v, err := strconv.Atoi(n); err == nil {
				line, rest = v, strings.TrimSpace(tail)
			}
		}
	}
	return &Error{File: p.file, Pos: Pos{Line: line, Column: 1}, Msg: "not valid YAML: " + rest}
}

func (p *parser) mapping(n *yaml.Node, what string) bool {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s must be a mapping of keys to values, not %s", what, kindName(n))
		return false
	}
	return true
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "nothing"
}

// fields walks a mapping's keys, calling the handler of each known key and reporting
// unknown and repeated keys.
func (p *parser) fields(n *yaml.Node, what string, handlers map[string]func(v *yaml.Node)) map[string]*yaml.Node {
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.errorf(k, "%s: a key must be a name", what)
			continue
		}
		if _, dup := seen[k.Value]; dup {
			p.errorf(k, "%s: %q given twice", what, k.Value)
			continue
		}
		seen[k.Value] = k
		h, ok := handlers[k.Value]
		if !ok {
			known := make(map[string]bool, len(handlers))
			for name := range handlers {
				known[name] = true
			}
			p.errorf(k, "%s: unknown key %q (known: %s)", what, k.Value, strings.Join(sortedKeys(known), ", "))
			continue
		}
		h(v)
	}
	return seen
}

func (p *parser) plan(n *yaml.Node, pl *Plan) {
	var targetNode, expNode *yaml.Node
	p.fields(n, "plan", map[string]func(*yaml.Node){
		"name": func(v *yaml.Node) {
			if s, ok := p.str(v, "name"); ok {
				if !nameRE.MatchString(s) {
					p.errorf(v, "name %q: use letters, digits, '.', '_' and '-' (it names a folder)", s)
				}
				pl.Name = s
			}
		},
		"description": func(v *yaml.Node) { pl.Description, _ = p.str(v, "description") },
		"results": func(v *yaml.Node) {
			if s, ok := p.str(v, "results"); ok {
				if s == "" {
					p.errorf(v, "results: give a folder")
				}
				pl.Results = s
			}
		},
		"report": func(v *yaml.Node) {
			if s, ok := p.str(v, "report"); ok {
				if s == "" || strings.ContainsRune(s, '/') || !strings.HasSuffix(s, ".html") {
					p.errorf(v, "report %q: give a file name ending in .html (it is written in the study's folder)", s)
				}
				pl.Report = s
			}
		},
		"target":      func(v *yaml.Node) { targetNode = v },
		"experiments": func(v *yaml.Node) { expNode = v },
	})
	if targetNode == nil {
		p.errorf(n, "plan: no target (give target: cluster: ... or target: connect: ...)")
	} else {
		p.target(targetNode, &pl.Target)
	}
	if expNode == nil {
		p.errorf(n, "plan: no experiments")
	} else {
		p.experiments(expNode, pl)
	}
}

func (p *parser) target(n *yaml.Node, t *Target) {
	if !p.mapping(n, "target") {
		return
	}
	var hostMetrics *yaml.Node
	p.fields(n, "target", map[string]func(*yaml.Node){
		"cluster":      func(v *yaml.Node) { t.Cluster = p.cluster(v) },
		"connect":      func(v *yaml.Node) { t.Connect = p.connect(v) },
		"host_metrics": func(v *yaml.Node) { hostMetrics, t.HostMetrics = v, p.hostMetrics(v) },
	})
	if (t.Cluster == nil) == (t.Connect == nil) {
		p.errorf(n, "target: give exactly one of cluster (a local cluster to create) or connect (connection strings)")
	}
	if t.Cluster != nil && t.HostMetrics != nil {
		p.hostMetricsNodes(hostMetrics, t.HostMetrics, t.Cluster.NodeNames())
	}
}

func (p *parser) connect(n *yaml.Node) *Connect {
	c := &Connect{}
	if !p.mapping(n, "target.connect") {
		return c
	}
	seen := p.fields(n, "target.connect", map[string]func(*yaml.Node){
		"primary":  func(v *yaml.Node) { c.Primary, _ = p.str(v, "target.connect.primary") },
		"listener": func(v *yaml.Node) { c.Listener, _ = p.str(v, "target.connect.listener") },
		"standbys": func(v *yaml.Node) {
			if v.Kind != yaml.SequenceNode {
				p.errorf(v, "target.connect.standbys: give a list of connection strings, not %s", kindName(v))
				return
			}
			for _, s := range v.Content {
				if x, ok := p.str(s, "target.connect.standbys"); ok {
					c.Standbys = append(c.Standbys, x)
				}
			}
		},
	})
	if _, ok := seen["primary"]; !ok || c.Primary == "" {
		p.errorf(n, "target.connect: give the primary's connection string (primary: ...)")
	}
	return c
}

func (p *parser) experiments(n *yaml.Node, pl *Plan) {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "experiments: give a list of experiments, not %s", kindName(n))
		return
	}
	if len(n.Content) == 0 {
		p.errorf(n, "experiments: the list is empty")
	}
	labels := map[string]*yaml.Node{}
	for i, en := range n.Content {
		what := fmt.Sprintf("experiments[%d]", i+1)
		if !p.mapping(en, what) {
			continue
		}
		e := Experiment{Pos: posOf(en)}
		var cmdNode *yaml.Node
		p.fields(en, what, map[string]func(*yaml.Node){
			"name": func(v *yaml.Node) {
				if s, ok := p.str(v, what+".name"); ok {
					if !nameRE.MatchString(s) {
						p.errorf(v, "%s.name %q: use letters, digits, '.', '_' and '-' (it names a folder)", what, s)
					}
					e.Name = s
				}
			},
			"command": func(v *yaml.Node) {
				cmdNode = v
				if s, ok := p.str(v, what+".command"); ok {
					e.Command = strings.Fields(strings.TrimPrefix(strings.TrimSpace(s), "agbench "))
					if len(e.Command) == 0 {
						p.errorf(v, "%s.command: give a command (stress, tpcc run, ...)", what)
					}
				}
			},
			"flags": func(v *yaml.Node) { e.Flags = p.flags(v, what) },
			"args": func(v *yaml.Node) {
				if v.Kind != yaml.SequenceNode {
					p.errorf(v, "%s.args: give a list of arguments, not %s", what, kindName(v))
					return
				}
				for _, x := range v.Content {
					if s, ok := p.str(x, what+".args"); ok {
						e.Args = append(e.Args, s)
					}
				}
			},
		})
		if cmdNode == nil {
			p.errorf(en, "%s: no command (command: stress, tpcc run, ...)", what)
			continue
		}
		label := e.Label()
		if prev, dup := labels[label]; dup {
			p.errorf(en, "%s: a second experiment named %q (the first is at line %d): give each a name", what, label, prev.Line)
		}
		labels[label] = en
		pl.Experiments = append(pl.Experiments, e)
	}
}

var flagRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

func (p *parser) flags(n *yaml.Node, what string) []Flag {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if !p.mapping(n, what+".flags") {
		return nil
	}
	var out []Flag
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := strings.TrimPrefix(k.Value, "--")
		if k.Kind != yaml.ScalarNode || !flagRE.MatchString(name) {
			p.errorf(k, "%s.flags: %q is not a flag name (threads, compare, ...)", what, k.Value)
			continue
		}
		if seen[name] {
			p.errorf(k, "%s.flags: --%s given twice", what, name)
			continue
		}
		seen[name] = true
		f := Flag{Name: name, Pos: posOf(v)}
		switch v.Kind {
		case yaml.ScalarNode:
			if v.Tag == "!!null" {
				p.errorf(v, "%s.flags.%s: give a value (true for a switch)", what, name)
				continue
			}
			f.Values = []string{v.Value}
		case yaml.SequenceNode:
			if len(v.Content) == 0 {
				p.errorf(v, "%s.flags.%s: the list is empty", what, name)
				continue
			}
			f.List = true
			for _, x := range v.Content {
				if x.Kind != yaml.ScalarNode || x.Tag == "!!null" || x.Value == "" {
					p.errorf(x, "%s.flags.%s: each element must be one value, not %s", what, name, kindName(x))
					continue
				}
				f.Values = append(f.Values, x.Value)
			}
		default:
			p.errorf(v, "%s.flags.%s: give a value or a list of values, not %s", what, name, kindName(v))
			continue
		}
		out = append(out, f)
	}
	return out
}

func (p *parser) str(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errorf(n, "%s: give a text value, not %s", what, kindName(n))
		return "", false
	}
	return n.Value, true
}

func (p *parser) integer(n *yaml.Node, what string) (int, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		p.errorf(n, "%s: give a whole number, not %s", what, kindName(n))
		return 0, false
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil {
		p.errorf(n, "%s: %q is not a whole number", what, n.Value)
		return 0, false
	}
	return v, true
}

func (p *parser) boolean(n *yaml.Node, what string) (bool, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		p.errorf(n, "%s: give true or false, not %s", what, kindName(n))
		return false, false
	}
	b, _ := strconv.ParseBool(n.Value)
	return b, true
}
