package calibrate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocCommentsNameWhatTheyDocument: a doc comment starts with the name
// of what it documents (after an optional article), so a comment that
// slipped onto the wrong declaration shows.
func TestDocCommentsNameWhatTheyDocument(t *testing.T) {
	for _, dir := range []string{".", "compare", "fit", "lab", "measured", "report"} {
		for _, bad := range misplacedDocs(t, dir) {
			t.Error(bad)
		}
	}
}

// misplacedDocs lists, for the non-test Go files in dir, every function,
// type, constant or variable whose own doc comment does not start with its
// name. Comments on a group of declarations in parentheses are headings
// and are not checked.
func misplacedDocs(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var bad []string
	check := func(doc *ast.CommentGroup, names ...string) {
		if doc == nil || len(names) == 0 {
			return
		}
		text := strings.Fields(doc.Text())
		for len(text) > 1 && (text[0] == "A" || text[0] == "An" || text[0] == "The") {
			text = text[1:]
		}
		if len(text) > 0 {
			first := strings.TrimSuffix(strings.TrimRight(text[0], ",.:;"), "'s")
			for _, n := range names {
				if first == n {
					return
				}
			}
		}
		bad = append(bad, fset.Position(doc.Pos()).String()+": doc comment of "+strings.Join(names, ", ")+" starts \""+strings.Join(text[:min(4, len(text))], " ")+"\"")
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				check(d.Doc, d.Name.Name)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					var names []string
					var doc *ast.CommentGroup
					switch s := s.(type) {
					case *ast.TypeSpec:
						names, doc = []string{s.Name.Name}, s.Doc
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names = append(names, n.Name)
						}
						doc = s.Doc
					}
					if doc == nil && !d.Lparen.IsValid() {
						doc = d.Doc
					}
					check(doc, names...)
				}
			}
		}
	}
	return bad
}
