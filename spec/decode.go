package spec

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/OpenSLO/go-sdk/pkg/openslo"
	"github.com/OpenSLO/go-sdk/pkg/openslosdk"
	"gopkg.in/yaml.v3"
)

// decodeOpenSLO decodes one object with go-sdk (strict) and validates it
// with go-sdk's rules, locating every problem.
func decodeOpenSLO(d *doc) (openslo.Object, Problems) {
	obj, ps := decodeSDK(d)
	if obj == nil {
		return nil, ps
	}
	if err := obj.Validate(); err != nil {
		return nil, validationProblems(d, err, samePath)
	}
	return obj, nil
}

// decodeSDK decodes one object of any OpenSLO version as openslosdk.Decode
// decodes a file: the object's YAML text goes to the SDK's own YAML reader,
// so every scalar gets the type the SDK gives it. (Decoding the node here
// and handing the SDK JSON would type `startTime: 2022-01-01 12:00:00` as a
// timestamp and re-encode it as RFC 3339, which the SDK then refuses.)
func decodeSDK(d *doc) (openslo.Object, Problems) {
	// yaml.v3 refuses alias bombs here, before aliases are expanded below.
	var raw any
	if err := d.node.Decode(&raw); err != nil {
		return nil, Problems{d.errorf("", "cannot read object: %v", err)}
	}
	text, err := yaml.Marshal(expandAliases(d.node))
	if err != nil {
		return nil, Problems{d.errorf("", "cannot read object: %v", err)}
	}
	objs, err := openslosdk.Decode(bytes.NewReader(text), openslosdk.FormatYAML)
	if err != nil {
		return nil, Problems{decodeProblem(d, err)}
	}
	if len(objs) != 1 {
		return nil, Problems{d.errorf("", "expected one object, read %d", len(objs))}
	}
	return objs[0], nil
}

// expandAliases copies n with every alias replaced by what it names, so an
// object taken out of its document (one item of a list) keeps the values
// of anchors defined elsewhere in that document. Scalars keep their text,
// tag and style: the copy reads as the original did.
func expandAliases(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return expandAliases(n.Alias)
	}
	c := *n
	c.Anchor = ""
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	if len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, k := range n.Content {
			c.Content[i] = expandAliases(k)
		}
	}
	return &c
}

// sdkObject decodes an object the SDK handed over as another version into
// v1, through its JSON form, for objects converted from older versions.
func sdkObject(m map[string]any) (openslo.Object, error) {
	js, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	objs, err := openslosdk.Decode(bytes.NewReader(js), openslosdk.FormatJSON)
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 {
		return nil, fmt.Errorf("expected one object, read %d", len(objs))
	}
	return objs[0], nil
}
