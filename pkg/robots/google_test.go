package robots

// Google's robots.txt test suite, transcribed as data: every
// IsUserAgentAllowed expectation of robots_test.cc in
// https://github.com/google/robotstxt at commit
// 22b355ff855419e6a3ff8ff09c0ad7fdb17116f9, and the parser-level checks
// (byte-order marks, line ends, Sitemap lines, pattern escaping) that have a
// counterpart here. Copyright 2019 Google LLC, licensed under the Apache
// License, Version 2.0 (https://www.apache.org/licenses/LICENSE-2.0); the
// robots.txt bodies, agents, URLs and expected answers are Google's, the Go
// around them is ours. Case names are the suite's TEST names plus a
// description.
//
// Not transcribed: IsValidUserAgentToObey (this package has no such check:
// Group takes a User-Agent header or token and uses its product token) and
// GetPathParamsQuery (Allowed takes the path and query as the caller will
// request them; fetch gets them from url.URL.RequestURI, used here too).

import (
	"net/url"
	"testing"
)

type googleCase struct {
	name    string
	robots  string
	agent   string
	url     string
	allowed bool
}

// googleDifferences are the cases of Google's suite this package answers
// differently on purpose, each with the reason. TestGoogleSuite fails when
// one of them starts to agree with Google (the list must shrink) or when a
// case not listed disagrees.
var googleDifferences = map[string]string{
	"UserAgentUpToFirstSpace/Foo Bar as the crawler's agent":  "the agent given to Group is a User-Agent header whose product token (its first word) is matched; Google matches the string the caller gives as a whole, so \"Foo Bar\" names no group there",
	"Encoding/raw UTF-8 URL, UTF-8 rule":                      "RFC 9309 2.2.2: octets outside US-ASCII are percent-encoded before comparing, so /foo/bar/ツ and /foo/bar/%E3%83%84 are one path; Google leaves the URL to the caller",
	"Encoding/raw UTF-8 URL, encoded rule":                    "as above: the URL's UTF-8 is percent-encoded before comparing (RFC 9309 2.2.2)",
	"Encoding/encoded unreserved rule, plain URL":             "RFC 3986 6.2.2.2 normalisation: %62%61%7A of unreserved characters is baz, so the rule matches /foo/bar/baz; Google compares the octets as written",
	"IndexHTMLisDirectory/directory of an allowed index.html": "Google-specific extension (a rule ending in index.html also covers its directory), not in RFC 9309",
	"LineTooLong/URL matching the cut-off disallow":           "Google-specific: lines are cut at 8*2083 bytes; RFC 9309 sets no line limit and the whole rule is used (a file is still cut at MaxSize)",
	"LineTooLong/URL matching the cut-off allow":              "as above: the whole allow rule is used, not its first 16664 bytes",
}

func googleCases() []googleCase {
	var cs []googleCase
	add := func(name, robots, agent, u string, allowed bool) {
		cs = append(cs, googleCase{name, robots, agent, u, allowed})
	}

	// GoogleOnly_SystemTest.
	{
		r := "user-agent: FooBot\n" +
			"disallow: /\n"
		add("SystemTest/empty robots.txt", "", "FooBot", "", true)
		add("SystemTest/empty user-agent", r, "", "", true)
		add("SystemTest/empty url", r, "FooBot", "", false)
		add("SystemTest/all empty", "", "", "", true)
	}

	// ID_LineSyntax_Line.
	{
		correct := "user-agent: FooBot\n" +
			"disallow: /\n"
		incorrect := "foo: FooBot\n" +
			"bar: /\n"
		accepted := "user-agent FooBot\n" +
			"disallow /\n"
		u := "http://foo.bar/x/y"
		add("LineSyntax_Line/correct", correct, "FooBot", u, false)
		add("LineSyntax_Line/incorrect", incorrect, "FooBot", u, true)
		add("LineSyntax_Line/missing colon accepted", accepted, "FooBot", u, false)
	}

	// ID_LineSyntax_Groups.
	{
		r := "allow: /foo/bar/\n" +
			"\n" +
			"user-agent: FooBot\n" +
			"disallow: /\n" +
			"allow: /x/\n" +
			"user-agent: BarBot\n" +
			"disallow: /\n" +
			"allow: /y/\n" +
			"\n" +
			"\n" +
			"allow: /w/\n" +
			"user-agent: BazBot\n" +
			"\n" +
			"user-agent: FooBot\n" +
			"allow: /z/\n" +
			"disallow: /\n"
		w, x, y, z := "http://foo.bar/w/a", "http://foo.bar/x/b", "http://foo.bar/y/c", "http://foo.bar/z/d"
		foo := "http://foo.bar/foo/bar/"
		add("LineSyntax_Groups/FooBot x", r, "FooBot", x, true)
		add("LineSyntax_Groups/FooBot z", r, "FooBot", z, true)
		add("LineSyntax_Groups/FooBot y", r, "FooBot", y, false)
		add("LineSyntax_Groups/BarBot y", r, "BarBot", y, true)
		add("LineSyntax_Groups/BarBot w", r, "BarBot", w, true)
		add("LineSyntax_Groups/BarBot z", r, "BarBot", z, false)
		add("LineSyntax_Groups/BazBot z", r, "BazBot", z, true)
		add("LineSyntax_Groups/FooBot rule outside groups", r, "FooBot", foo, false)
		add("LineSyntax_Groups/BarBot rule outside groups", r, "BarBot", foo, false)
		add("LineSyntax_Groups/BazBot rule outside groups", r, "BazBot", foo, false)
	}

	// ID_LineSyntax_Groups_OtherRules.
	{
		r := "User-agent: BarBot\n" +
			"Sitemap: https://foo.bar/sitemap\n" +
			"User-agent: *\n" +
			"Disallow: /\n"
		u := "http://foo.bar/"
		add("Groups_OtherRules/sitemap FooBot", r, "FooBot", u, false)
		add("Groups_OtherRules/sitemap BarBot", r, "BarBot", u, false)
		r = "User-agent: FooBot\n" +
			"Invalid-Unknown-Line: unknown\n" +
			"User-agent: *\n" +
			"Disallow: /\n"
		add("Groups_OtherRules/unknown FooBot", r, "FooBot", u, false)
		add("Groups_OtherRules/unknown BarBot", r, "BarBot", u, false)
	}

	// ID_REPLineNamesCaseInsensitive.
	{
		upper := "USER-AGENT: FooBot\n" +
			"ALLOW: /x/\n" +
			"DISALLOW: /\n"
		lower := "user-agent: FooBot\n" +
			"allow: /x/\n" +
			"disallow: /\n"
		camel := "uSeR-aGeNt: FooBot\n" +
			"AlLoW: /x/\n" +
			"dIsAlLoW: /\n"
		yes, no := "http://foo.bar/x/y", "http://foo.bar/a/b"
		add("LineNamesCaseInsensitive/upper allowed", upper, "FooBot", yes, true)
		add("LineNamesCaseInsensitive/lower allowed", lower, "FooBot", yes, true)
		add("LineNamesCaseInsensitive/camel allowed", camel, "FooBot", yes, true)
		add("LineNamesCaseInsensitive/upper disallowed", upper, "FooBot", no, false)
		add("LineNamesCaseInsensitive/lower disallowed", lower, "FooBot", no, false)
		add("LineNamesCaseInsensitive/camel disallowed", camel, "FooBot", no, false)
	}

	// ID_UserAgentValueCaseInsensitive.
	{
		bodies := []struct{ name, robots string }{
			{"upper", "User-Agent: FOO BAR\nAllow: /x/\nDisallow: /\n"},
			{"lower", "User-Agent: foo bar\nAllow: /x/\nDisallow: /\n"},
			{"camel", "User-Agent: FoO bAr\nAllow: /x/\nDisallow: /\n"},
		}
		yes, no := "http://foo.bar/x/y", "http://foo.bar/a/b"
		for _, agent := range []string{"Foo", "foo"} {
			for _, b := range bodies {
				add("UserAgentValueCaseInsensitive/"+b.name+" "+agent+" allowed", b.robots, agent, yes, true)
			}
			for _, b := range bodies {
				add("UserAgentValueCaseInsensitive/"+b.name+" "+agent+" disallowed", b.robots, agent, no, false)
			}
		}
	}

	// GoogleOnly_AcceptUserAgentUpToFirstSpace.
	{
		r := "User-Agent: *\n" +
			"Disallow: /\n" +
			"User-Agent: Foo Bar\n" +
			"Allow: /x/\n" +
			"Disallow: /\n"
		u := "http://foo.bar/x/y"
		add("UserAgentUpToFirstSpace/Foo", r, "Foo", u, true)
		add("UserAgentUpToFirstSpace/Foo Bar as the crawler's agent", r, "Foo Bar", u, false)
	}

	// ID_GlobalGroups_Secondary.
	{
		global := "user-agent: *\n" +
			"allow: /\n" +
			"user-agent: FooBot\n" +
			"disallow: /\n"
		onlySpecific := "user-agent: FooBot\n" +
			"allow: /\n" +
			"user-agent: BarBot\n" +
			"disallow: /\n" +
			"user-agent: BazBot\n" +
			"disallow: /\n"
		u := "http://foo.bar/x/y"
		add("GlobalGroups_Secondary/empty", "", "FooBot", u, true)
		add("GlobalGroups_Secondary/global FooBot", global, "FooBot", u, false)
		add("GlobalGroups_Secondary/global BarBot", global, "BarBot", u, true)
		add("GlobalGroups_Secondary/only specific QuxBot", onlySpecific, "QuxBot", u, true)
	}

	// ID_AllowDisallow_Value_CaseSensitive.
	{
		u := "http://foo.bar/x/y"
		add("Value_CaseSensitive/lower rule", "user-agent: FooBot\ndisallow: /x/\n", "FooBot", u, false)
		add("Value_CaseSensitive/upper rule", "user-agent: FooBot\ndisallow: /X/\n", "FooBot", u, true)
	}

	// ID_LongestMatch.
	{
		u := "http://foo.bar/x/page.html"
		add("LongestMatch/longer disallow", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/\n", "FooBot", u, false)
		r := "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n"
		add("LongestMatch/longer allow", r, "FooBot", u, true)
		add("LongestMatch/longer allow, directory", r, "FooBot", "http://foo.bar/x/", false)
		add("LongestMatch/empty disallow and allow", "user-agent: FooBot\ndisallow: \nallow: \n", "FooBot", u, true)
		add("LongestMatch/equal / rules", "user-agent: FooBot\ndisallow: /\nallow: /\n", "FooBot", u, true)
		r = "user-agent: FooBot\ndisallow: /x\nallow: /x/\n"
		add("LongestMatch/x", r, "FooBot", "http://foo.bar/x", false)
		add("LongestMatch/x/", r, "FooBot", "http://foo.bar/x/", true)
		add("LongestMatch/equal page rules", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/page.html\n", "FooBot", u, true)
		r = "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n"
		add("LongestMatch/wildcard longer", r, "FooBot", "http://foo.bar/page.html", false)
		add("LongestMatch/wildcard not matching", r, "FooBot", "http://foo.bar/page", true)
		r = "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n"
		add("LongestMatch/allow longer than wildcard", r, "FooBot", u, true)
		add("LongestMatch/wildcard only", r, "FooBot", "http://foo.bar/x/y.html", false)
		r = "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n"
		add("LongestMatch/specific group x", r, "FooBot", "http://foo.bar/x/page", true)
		add("LongestMatch/specific group y", r, "FooBot", "http://foo.bar/y/page", false)
	}

	// ID_Encoding.
	{
		add("Encoding/query with a URL", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n",
			"FooBot", "http://foo.bar/foo/bar?qux=taz&baz=http://foo.bar?tar&par", true)
		r := "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n"
		add("Encoding/encoded URL, UTF-8 rule", r, "FooBot", "http://foo.bar/foo/bar/%E3%83%84", true)
		add("Encoding/raw UTF-8 URL, UTF-8 rule", r, "FooBot", "http://foo.bar/foo/bar/ツ", false)
		r = "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n"
		add("Encoding/encoded URL, encoded rule", r, "FooBot", "http://foo.bar/foo/bar/%E3%83%84", true)
		add("Encoding/raw UTF-8 URL, encoded rule", r, "FooBot", "http://foo.bar/foo/bar/ツ", false)
		r = "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n"
		add("Encoding/encoded unreserved rule, plain URL", r, "FooBot", "http://foo.bar/foo/bar/baz", false)
		add("Encoding/encoded unreserved rule, same URL", r, "FooBot", "http://foo.bar/foo/bar/%62%61%7A", true)
	}

	// ID_SpecialCharacters.
	{
		r := "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n"
		add("SpecialCharacters/star bar quz", r, "FooBot", "http://foo.bar/foo/bar/quz", false)
		add("SpecialCharacters/star quz", r, "FooBot", "http://foo.bar/foo/quz", true)
		add("SpecialCharacters/star //quz", r, "FooBot", "http://foo.bar/foo//quz", true)
		add("SpecialCharacters/star bax quz", r, "FooBot", "http://foo.bar/foo/bax/quz", true)
		r = "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n"
		add("SpecialCharacters/dollar exact", r, "FooBot", "http://foo.bar/foo/bar", false)
		add("SpecialCharacters/dollar qux", r, "FooBot", "http://foo.bar/foo/bar/qux", true)
		add("SpecialCharacters/dollar slash", r, "FooBot", "http://foo.bar/foo/bar/", true)
		add("SpecialCharacters/dollar baz", r, "FooBot", "http://foo.bar/foo/bar/baz", true)
		r = "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n"
		add("SpecialCharacters/comment bar", r, "FooBot", "http://foo.bar/foo/bar", true)
		add("SpecialCharacters/comment quz", r, "FooBot", "http://foo.bar/foo/quz", false)
	}

	// GoogleOnly_IndexHTMLisDirectory.
	{
		r := "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n"
		add("IndexHTMLisDirectory/directory of an allowed index.html", r, "foobot", "http://foo.com/allowed-slash/", true)
		add("IndexHTMLisDirectory/index.htm", r, "foobot", "http://foo.com/allowed-slash/index.htm", false)
		add("IndexHTMLisDirectory/index.html", r, "foobot", "http://foo.com/allowed-slash/index.html", true)
		add("IndexHTMLisDirectory/other", r, "foobot", "http://foo.com/anyother-url", false)
	}

	// GoogleOnly_LineTooLong.
	{
		const eolLen, maxLineLen = 1, 2083 * 8
		const allow, disallow = "allow: ", "disallow: "
		r := "user-agent: FooBot\n"
		long := "/x/"
		for maxLen := maxLineLen - len(long) - len(disallow) + eolLen; len(long) < maxLen; {
			long += "a"
		}
		r += disallow + long + "/qux\n"
		add("LineTooLong/URL matching nothing", r, "FooBot", "http://foo.bar/fux", true)
		add("LineTooLong/URL matching the cut-off disallow", r, "FooBot", "http://foo.bar"+long+"/fux", false)

		r = "user-agent: FooBot\ndisallow: /\n"
		a, b := "/x/", "/x/"
		for maxLen := maxLineLen - len(a) - len(allow) + eolLen; len(a) < maxLen; {
			a += "a"
			b += "b"
		}
		r += allow + a + "/qux\n" + allow + b + "/qux\n"
		add("LineTooLong/URL matching the disallow", r, "FooBot", "http://foo.bar/", false)
		add("LineTooLong/URL matching the whole allow", r, "FooBot", "http://foo.bar"+a+"/qux", true)
		add("LineTooLong/URL matching the cut-off allow", r, "FooBot", "http://foo.bar"+b+"/fux", true)
	}

	// GoogleOnly_DocumentationChecks.
	{
		const h = "http://foo.bar"
		r := "user-agent: FooBot\ndisallow: /\nallow: /fish\n"
		for _, c := range []struct {
			path    string
			allowed bool
		}{
			{"/bar", false}, {"/fish", true}, {"/fish.html", true}, {"/fish/salmon.html", true},
			{"/fishheads", true}, {"/fishheads/yummy.html", true}, {"/fish.html?id=anything", true},
			{"/Fish.asp", false}, {"/catfish", false}, {"/?id=fish", false},
		} {
			add("DocumentationChecks/fish "+c.path, r, "FooBot", h+c.path, c.allowed)
		}
		r = "user-agent: FooBot\ndisallow: /\nallow: /fish*\n"
		for _, c := range []struct {
			path    string
			allowed bool
		}{
			{"/bar", false}, {"/fish", true}, {"/fish.html", true}, {"/fish/salmon.html", true},
			{"/fishheads", true}, {"/fishheads/yummy.html", true}, {"/fish.html?id=anything", true},
			{"/Fish.bar", false}, {"/catfish", false}, {"/?id=fish", false},
		} {
			add("DocumentationChecks/fish* "+c.path, r, "FooBot", h+c.path, c.allowed)
		}
		r = "user-agent: FooBot\ndisallow: /\nallow: /fish/\n"
		for _, c := range []struct {
			path    string
			allowed bool
		}{
			{"/bar", false}, {"/fish/", true}, {"/fish/salmon", true}, {"/fish/?salmon", true},
			{"/fish/salmon.html", true}, {"/fish/?id=anything", true},
			{"/fish", false}, {"/fish.html", false}, {"/Fish/Salmon.html", false},
		} {
			add("DocumentationChecks/fish/ "+c.path, r, "FooBot", h+c.path, c.allowed)
		}
		r = "user-agent: FooBot\ndisallow: /\nallow: /*.php\n"
		for _, c := range []struct {
			path    string
			allowed bool
		}{
			{"/bar", false}, {"/filename.php", true}, {"/folder/filename.php", true},
			{"/folder/filename.php?parameters", true}, {"//folder/any.php.file.html", true},
			{"/filename.php/", true}, {"/index?f=filename.php/", true},
			{"/php/", false}, {"/index?php", false}, {"/windows.PHP", false},
		} {
			add("DocumentationChecks/*.php "+c.path, r, "FooBot", h+c.path, c.allowed)
		}
		r = "user-agent: FooBot\ndisallow: /\nallow: /*.php$\n"
		for _, c := range []struct {
			path    string
			allowed bool
		}{
			{"/bar", false}, {"/filename.php", true}, {"/folder/filename.php", true},
			{"/filename.php?parameters", false}, {"/filename.php/", false}, {"/filename.php5", false},
			{"/php/", false}, {"/filename?php", false}, {"/aaaphpaaa", false}, {"//windows.PHP", false},
		} {
			add("DocumentationChecks/*.php$ "+c.path, r, "FooBot", h+c.path, c.allowed)
		}
		r = "user-agent: FooBot\ndisallow: /\nallow: /fish*.php\n"
		for _, c := range []struct {
			path    string
			allowed bool
		}{
			{"/bar", false}, {"/fish.php", true}, {"/fishheads/catfish.php?parameters", true}, {"/Fish.PHP", false},
		} {
			add("DocumentationChecks/fish*.php "+c.path, r, "FooBot", h+c.path, c.allowed)
		}
		add("DocumentationChecks/precedence /p", "user-agent: FooBot\nallow: /p\ndisallow: /\n", "FooBot", "http://example.com/page", true)
		add("DocumentationChecks/precedence /folder", "user-agent: FooBot\nallow: /folder\ndisallow: /folder\n", "FooBot", "http://example.com/folder/page", true)
		add("DocumentationChecks/precedence /*.htm", "user-agent: FooBot\nallow: /page\ndisallow: /*.htm\n", "FooBot", "http://example.com/page.htm", false)
		r = "user-agent: FooBot\nallow: /$\ndisallow: /\n"
		add("DocumentationChecks/precedence /$ root", r, "FooBot", "http://example.com/", true)
		add("DocumentationChecks/precedence /$ page", r, "FooBot", "http://example.com/page.html", false)
	}
	return cs
}

// requestPath is what fetch passes to Allowed for a URL: its RequestURI.
func requestPath(t *testing.T, raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	return u.RequestURI()
}

func TestGoogleSuite(t *testing.T) {
	cases := googleCases()
	seen := map[string]bool{}
	pass := 0
	for _, c := range cases {
		if seen[c.name] {
			t.Fatalf("two cases named %q", c.name)
		}
		seen[c.name] = true
		got := Parse([]byte(c.robots)).Allowed(c.agent, requestPath(t, c.url))
		reason, listed := googleDifferences[c.name]
		switch {
		case got == c.allowed && listed:
			t.Errorf("%s: now agrees with Google (allowed=%v); drop it from googleDifferences (%s)", c.name, got, reason)
		case got != c.allowed && !listed:
			t.Errorf("%s: Allowed(%q, %q) = %v, Google's suite wants %v\n%s", c.name, c.agent, c.url, got, c.allowed, c.robots)
		}
		if got == c.allowed {
			pass++
		}
	}
	for name := range googleDifferences {
		if !seen[name] {
			t.Errorf("googleDifferences names %q, which is no case", name)
		}
	}
	t.Logf("%d of %d cases of Google's suite agree; %d listed differences", pass, len(cases), len(googleDifferences))
}

// The parser-level checks of the suite: how many lines are read as
// directives (user-agent, allow, disallow, sitemap), how many as unknown
// key-value lines, and the number of the last such line.
func TestGoogleSuiteParser(t *testing.T) {
	for _, c := range []struct {
		name                     string
		robots                   string
		valid, unknown, lastLine int
	}{
		// ID_LinesNumbersAreCountedCorrectly.
		{"unix", "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /\n", 4, 0, 6},
		{"dos", "User-Agent: foo\r\nAllow: /some/path\r\nUser-Agent: bar\r\n\r\n\r\nDisallow: /\r\n", 4, 0, 6},
		{"mac", "User-Agent: foo\rAllow: /some/path\rUser-Agent: bar\r\r\rDisallow: /\r", 4, 0, 6},
		{"no final newline", "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /", 4, 0, 6},
		{"mixed", "User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /", 4, 0, 6},
		// ID_UTF8ByteOrderMarkIsSkipped.
		{"full BOM", "\xEF\xBB\xBFUser-Agent: foo\nAllow: /AnyValue\n", 2, 0, 2},
		{"2-byte BOM", "\xEF\xBBUser-Agent: foo\nAllow: /AnyValue\n", 2, 0, 2},
		{"1-byte BOM", "\xEFUser-Agent: foo\nAllow: /AnyValue\n", 2, 0, 2},
		{"broken BOM", "\xEF\x11\xBFUser-Agent: foo\nAllow: /AnyValue\n", 1, 1, 2},
		{"BOM in the middle", "User-Agent: foo\n\xEF\xBB\xBFAllow: /AnyValue\n", 1, 1, 2},
	} {
		valid, unknown, last := 0, 0, 0
		scan([]byte(c.robots), func(line int, k key, _ string) {
			if k == keyUnknown {
				unknown++
			} else {
				valid++
			}
			last = line
		})
		if valid != c.valid || unknown != c.unknown || last != c.lastLine {
			t.Errorf("%s: %d directives, %d unknown, last line %d; want %d, %d, %d",
				c.name, valid, unknown, last, c.valid, c.unknown, c.lastLine)
		}
	}

	// ID_NonStandardLineExample_Sitemap: a Sitemap line at the end or the
	// start of the file.
	const loc = "http://foo.bar/sitemap.xml"
	body := "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\n"
	for _, r := range []string{body + "Sitemap: " + loc + "\n", "Sitemap: " + loc + "\n" + body} {
		if s := Parse([]byte(r)).Sitemaps(); len(s) != 1 || s[0] != loc {
			t.Errorf("sitemaps of %q: %q", r, s)
		}
	}

	// TestMaybeEscapePattern: a rule's comparison form.
	for in, want := range map[string]string{
		"http://www.example.com": "http://www.example.com",
		"/a/b/c":                 "/a/b/c",
		"á":                      "%C3%A1",
		"%aa":                    "%AA",
	} {
		if got := normalize(in); got != want {
			t.Errorf("normalize(%q) = %q, want %q", in, got, want)
		}
	}
}
