package report

import (
	"io"

	jsoniter "github.com/json-iterator/go"
)

var jsonAPI = jsoniter.Config{EscapeHTML: false, SortMapKeys: true}.Froze()

// WriteJSON writes the report as one JSON document, for monitoring: the
// same numbers as the text, every turn's (the text lists the last ones).
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := jsonAPI.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
