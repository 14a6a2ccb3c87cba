package eventtype

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestFamilies holds each family's definitions to what the catalogue can
// say: every field appears in some event type of its family (a stage
// named in Stages that no family has would silently drop it), the names of
// a family are unique, and the fields an event type fixes are strings.
func TestFamilies(t *testing.T) {
	for _, f := range families() {
		stages := map[string]bool{}
		for _, s := range f.stages {
			stages[s.name] = true
		}
		seen := map[string]bool{}
		for _, d := range f.fields {
			fd := d.Spec()
			if seen[fd.Name] {
				t.Errorf("%s*: field %s defined twice", f.prefix, fd.Name)
			}
			seen[fd.Name] = true
			for _, s := range fd.Stages {
				if !stages[s] {
					t.Errorf("%s*: field %s names stage %q, which the family has not", f.prefix, fd.Name, s)
				}
			}
			if fd.Type == "" || fd.Description == "" || fd.Name == "" {
				t.Errorf("%s*: field %+v lacks a name, type or description", f.prefix, fd)
			}
			if fd.Fixed != Free && fd.Type != TypeString {
				t.Errorf("%s*: field %s is fixed but not a string", f.prefix, fd.Name)
			}
			if fd.Values != "" && fd.Type != TypeObject {
				t.Errorf("%s*: field %s has member types but is not an object", f.prefix, fd.Name)
			}
			if fd.Pattern != "" {
				if _, err := regexp.Compile(fd.Pattern); err != nil {
					t.Errorf("%s*: field %s: %v", f.prefix, fd.Name, err)
				}
			}
			if strings.HasSuffix(fd.When, ".") {
				t.Errorf("%s*: field %s: When %q ends a sentence the schema ends", f.prefix, fd.Name, fd.When)
			}
		}
	}
}

// TestStageNames: an event type's stage is the last part of its name, and
// a field its event type fixes to the stage lists the stage's name.
func TestStageNames(t *testing.T) {
	for _, e := range All() {
		if !strings.HasSuffix(e.Name, e.Stage) {
			t.Errorf("%s: stage %q is not the end of its name", e.Name, e.Stage)
		}
		for _, f := range e.Fields {
			if len(f.Enum) > 0 && f.Fixed == StageName && !slices.Contains(f.Enum, e.Stage) {
				t.Errorf("%s: %s's enum lacks the stage", e.Name, f.Name)
			}
		}
	}
}
