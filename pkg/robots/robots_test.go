package robots

import (
	"strings"
	"testing"
	"time"
)

// The conformance table: each case is a robots.txt, an agent, a path and
// the expected answer, grouped by the part of RFC 9309 (or of common
// practice) it exercises. Written for this project in the spirit of Google's
// robots_test.cc.
var conformance = []struct {
	name    string
	robots  string
	agent   string
	path    string
	allowed bool
}{
	// 2.1 / 2.2.1: groups and user agents.
	{"empty file allows", "", "bot", "/x", true},
	{"no matching group allows", "user-agent: other\ndisallow: /\n", "bot", "/x", true},
	{"star group applies", "user-agent: *\ndisallow: /\n", "bot", "/x", false},
	{"specific group beats star", "user-agent: *\ndisallow: /\n\nuser-agent: bot\nallow: /\n", "bot", "/x", true},
	{"specific group beats star 2", "user-agent: bot\ndisallow: /x\n\nuser-agent: *\ndisallow: /\n", "bot", "/y", true},
	{"agent case-insensitive", "User-Agent: BoT\nDisallow: /\n", "bot", "/x", false},
	{"keys case-insensitive", "USER-AGENT: bot\nDISALLOW: /\n", "bot", "/x", false},
	{"agent from full UA string", "user-agent: bot\ndisallow: /\n", "Bot/2.1 (+http://x.test)", "/x", false},
	{"robots agent version ignored", "user-agent: bot/1.0\ndisallow: /\n", "bot", "/x", false},
	{"agent is a token, not a prefix", "user-agent: botany\ndisallow: /\n", "bot", "/x", true},
	{"agent is a token, not a prefix 2", "user-agent: bot\ndisallow: /\n", "botany", "/x", true},
	{"several agents share a group", "user-agent: a\nuser-agent: bot\nuser-agent: c\ndisallow: /\n", "bot", "/x", false},
	{"groups of one agent merge", "user-agent: bot\ndisallow: /a\n\nuser-agent: other\ndisallow: /b\n\nuser-agent: bot\ndisallow: /c\n", "bot", "/c", false},
	{"groups of one agent merge 2", "user-agent: bot\ndisallow: /a\n\nuser-agent: other\ndisallow: /b\n\nuser-agent: bot\ndisallow: /c\n", "bot", "/b", true},
	{"star groups merge", "user-agent: *\ndisallow: /a\nuser-agent: x\ndisallow: /\nuser-agent: *\ndisallow: /b\n", "bot", "/b", false},
	{"rules before any user-agent ignored", "disallow: /\nuser-agent: other\ndisallow: /x\n", "bot", "/y", true},
	{"rules before any user-agent ignored 2", "disallow: /y\nuser-agent: bot\ndisallow: /x\n", "bot", "/y", true},
	{"user-agent after rules opens a group", "user-agent: a\ndisallow: /x\nuser-agent: bot\ndisallow: /y\n", "bot", "/x", true},
	{"blank lines do not close a group", "user-agent: bot\n\n\ndisallow: /\n", "bot", "/x", false},
	{"sitemap does not close a group", "user-agent: bot\nsitemap: http://x.test/s.xml\ndisallow: /\n", "bot", "/x", false},
	{"unknown key does not close agents", "user-agent: a\nfoo: bar\nuser-agent: bot\ndisallow: /\n", "bot", "/x", false},
	{"agents separated by a blank line share a group", "user-agent: bot\n\nuser-agent: *\ndisallow: /\n", "bot", "/x", false},
	{"specific group without a matching rule allows", "user-agent: bot\nallow: /nothing\n\nuser-agent: *\ndisallow: /\n", "bot", "/x", true},

	// 2.2.2: rules and longest match.
	{"disallow prefix", "user-agent: *\ndisallow: /private\n", "bot", "/private/a", false},
	{"disallow prefix of a word", "user-agent: *\ndisallow: /private\n", "bot", "/privateer", false},
	{"disallow other path", "user-agent: *\ndisallow: /private/\n", "bot", "/private", true},
	{"empty disallow allows", "user-agent: *\ndisallow:\n", "bot", "/x", true},
	{"empty allow changes nothing", "user-agent: *\ndisallow: /\nallow:\n", "bot", "/x", false},
	{"longer allow wins", "user-agent: *\ndisallow: /a\nallow: /a/b\n", "bot", "/a/b/c", true},
	{"longer disallow wins", "user-agent: *\nallow: /a\ndisallow: /a/b\n", "bot", "/a/b/c", false},
	{"order does not matter", "user-agent: *\nallow: /a/b\ndisallow: /a\n", "bot", "/a/b", true},
	{"allow wins a tie", "user-agent: *\ndisallow: /a\nallow: /a\n", "bot", "/a", true},
	{"allow wins a tie, other order", "user-agent: *\nallow: /a\ndisallow: /a\n", "bot", "/a", true},
	{"tie between wildcard rules", "user-agent: *\ndisallow: /*.x\nallow: /a*x\n", "bot", "/a.x", true},
	{"case-sensitive paths", "user-agent: *\ndisallow: /Private\n", "bot", "/private", true},
	{"query is part of the path", "user-agent: *\ndisallow: /s?q=\n", "bot", "/s?q=1", false},
	{"query other param", "user-agent: *\ndisallow: /s?q=\n", "bot", "/s?p=1", true},
	{"empty path is /", "user-agent: *\ndisallow: /$\n", "bot", "", false},
	{"root allowed, rest not", "user-agent: *\nallow: /$\ndisallow: /\n", "bot", "/", true},
	{"root allowed, rest not 2", "user-agent: *\nallow: /$\ndisallow: /\n", "bot", "/a", false},
	{"robots.txt always allowed", "user-agent: *\ndisallow: /\n", "bot", "/robots.txt", true},

	// 2.2.3: special characters.
	{"star any run", "user-agent: *\ndisallow: /*.php\n", "bot", "/a/b/index.php?x", false},
	{"star matches empty", "user-agent: *\ndisallow: /a*b\n", "bot", "/ab", false},
	{"star no match", "user-agent: *\ndisallow: /*.php\n", "bot", "/a/b/index.html", true},
	{"dollar anchors", "user-agent: *\ndisallow: /*.php$\n", "bot", "/index.php", false},
	{"dollar anchors 2", "user-agent: *\ndisallow: /*.php$\n", "bot", "/index.php?x=1", true},
	{"dollar anchors 3", "user-agent: *\ndisallow: /*.php$\n", "bot", "/index.php5", true},
	{"dollar in the middle is literal", "user-agent: *\ndisallow: /a$b\n", "bot", "/a$b/c", false},
	{"several stars", "user-agent: *\ndisallow: /*/b/*/d\n", "bot", "/a/b/c/d/e", false},
	{"several stars 2", "user-agent: *\ndisallow: /*/b/*/d\n", "bot", "/a/b/c/e", true},
	{"consecutive stars", "user-agent: *\ndisallow: /a**b\n", "bot", "/axxb", false},
	{"star then dollar", "user-agent: *\ndisallow: /a*$\n", "bot", "/a/anything", false},
	{"lone star disallows all", "user-agent: *\ndisallow: *\n", "bot", "/x", false},
	{"longest wins with wildcards", "user-agent: *\nallow: /*.html\ndisallow: /dir/\n", "bot", "/dir/x.html", true},
	{"longest wins with wildcards 2", "user-agent: *\nallow: /*.htm\ndisallow: /directory/\n", "bot", "/directory/x.htm", false},
	{"hash starts a comment", "user-agent: *\ndisallow: /a#b\n", "bot", "/a", false},

	// Percent-encoding equivalence.
	{"encoded unreserved in rule", "user-agent: *\ndisallow: /%7Ejoe\n", "bot", "/~joe/x", false},
	{"encoded unreserved in path", "user-agent: *\ndisallow: /~joe\n", "bot", "/%7ejoe/x", false},
	{"hex case is equal", "user-agent: *\ndisallow: /a%2fb\n", "bot", "/a%2Fb", false},
	{"reserved stays encoded", "user-agent: *\ndisallow: /a%2Fb\n", "bot", "/a/b", true},
	{"utf-8 in rule matches encoded path", "user-agent: *\ndisallow: /ä\n", "bot", "/%C3%A4/x", false},
	{"encoded rule matches encoded path", "user-agent: *\ndisallow: /%C3%A4\n", "bot", "/%c3%a4", false},
	{"space in path", "user-agent: *\ndisallow: /a%20b\n", "bot", "/a b", false},
	{"encoded star is literal", "user-agent: *\ndisallow: /a%2Ab\n", "bot", "/axxb", true},

	// Syntax tolerance.
	{"crlf line ends", "user-agent: *\r\ndisallow: /x\r\n", "bot", "/x", false},
	{"cr line ends", "user-agent: *\rdisallow: /x\r", "bot", "/x", false},
	{"bom", "\xEF\xBB\xBFuser-agent: *\ndisallow: /x\n", "bot", "/x", false},
	{"bom cut to two bytes", "\xEF\xBBuser-agent: *\ndisallow: /x\n", "bot", "/x", false},
	{"bom cut to one byte", "\xEFuser-agent: *\ndisallow: /x\n", "bot", "/x", false},
	{"spaces around", "  user-agent  :   *   \n   disallow :   /x  \n", "bot", "/x", false},
	{"missing colon", "user-agent *\ndisallow /x\n", "bot", "/x", false},
	{"misspelt disallow", "user-agent: *\ndissallow: /x\n", "bot", "/x", false},
	{"misspelt user-agent", "useragent: *\ndisallow: /x\n", "bot", "/x", false},
	{"comment lines", "# hello\nuser-agent: * # all\n# mid\ndisallow: /x # no\n", "bot", "/x", false},
	{"garbage lines skipped", "user-agent: *\n<html>\n)(*&^\ndisallow: /x\n", "bot", "/x", false},
	{"no trailing newline", "user-agent: *\ndisallow: /x", "bot", "/x", false},
}

func TestConformance(t *testing.T) {
	for _, c := range conformance {
		got := Parse([]byte(c.robots)).Allowed(c.agent, c.path)
		if got != c.allowed {
			t.Errorf("%s: Allowed(%q, %q) = %v, want %v\n%s", c.name, c.agent, c.path, got, c.allowed, c.robots)
		}
	}
}

func TestFromStatus(t *testing.T) {
	body := []byte("user-agent: *\ndisallow: /x\n")
	for _, c := range []struct {
		status  int
		path    string
		allowed bool
	}{
		{200, "/x", false}, {200, "/y", true},
		{404, "/x", true}, {403, "/x", true}, {410, "/anything", true},
		{429, "/y", false}, {500, "/y", false}, {503, "/y", false}, {0, "/y", false},
		{500, "/robots.txt", true},
	} {
		if got := FromStatus(c.status, body).Allowed("bot", c.path); got != c.allowed {
			t.Errorf("status %d path %s: %v, want %v", c.status, c.path, got, c.allowed)
		}
	}
}

// At least 500 KiB is parsed: a rule near the 500 KiB mark counts, and a
// rule beyond MaxSize does not.
func TestLargeFile(t *testing.T) {
	var b strings.Builder
	b.WriteString("user-agent: *\n")
	for b.Len() < 499<<10 {
		b.WriteString("disallow: /filler/path/that/matches/nothing/useful\n")
	}
	b.WriteString("disallow: /late\n")
	for b.Len() < MaxSize+1000 {
		b.WriteString("# comment padding comment padding\n")
	}
	b.WriteString("disallow: /too-late\n")
	r := Parse([]byte(b.String()))
	if r.Allowed("bot", "/late") {
		t.Error("a rule before 500 KiB was ignored")
	}
	if !r.Allowed("bot", "/too-late") {
		t.Error("a rule beyond MaxSize was used")
	}
}

func TestCrawlDelayAndSitemaps(t *testing.T) {
	r := Parse([]byte("sitemap: http://x.test/a.xml\nuser-agent: *\ncrawl-delay: 2.5\n\nuser-agent: bot\ncrawl-delay: 7\ndisallow: /p\n\nuser-agent: bot\ncrawl-delay: nonsense\n"))
	if d, ok := r.Group("bot/1.0").CrawlDelay(); !ok || d != 7*time.Second {
		t.Errorf("bot delay %v %v", d, ok)
	}
	if d, ok := r.Group("other").CrawlDelay(); !ok || d != 2500*time.Millisecond {
		t.Errorf("other delay %v %v", d, ok)
	}
	if _, ok := Parse([]byte("user-agent: *\ndisallow: /\n")).Group("bot").CrawlDelay(); ok {
		t.Error("delay without a crawl-delay line")
	}
	if s := r.Sitemaps(); len(s) != 1 || s[0] != "http://x.test/a.xml" {
		t.Errorf("sitemaps %v", s)
	}
}

// Pathological patterns stay fast (no exponential backtracking).
func TestPathologicalPattern(t *testing.T) {
	robots := "user-agent: *\ndisallow: /" + strings.Repeat("*a", 200) + "b$\n"
	path := "/" + strings.Repeat("a", 5000)
	start := time.Now()
	if !Parse([]byte(robots)).Allowed("bot", path) {
		t.Error("pattern should not match")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestProductToken(t *testing.T) {
	for in, want := range map[string]string{
		"crawlkit/0.1 (+https://x.test)": "crawlkit",
		"Googlebot-Image/1.0":            "googlebot-image",
		"  My_Bot":                       "my_bot",
		"*":                              "*",
	} {
		if got := ProductToken(in); got != want {
			t.Errorf("ProductToken(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, c := range conformance {
		f.Add(c.robots, c.path)
	}
	f.Add("user-agent: *\ndisallow: /%", "/%")
	f.Add("user-agent: *\nallow: /%zz\ndisallow: *$$", "/%zz")
	f.Fuzz(func(t *testing.T, robots, path string) {
		r := Parse([]byte(robots))
		a := r.Allowed("bot", path)
		// The answer is deterministic and /robots.txt is always allowed.
		if b := r.Allowed("bot", path); a != b {
			t.Fatal("non-deterministic")
		}
		if !r.Allowed("bot", "/robots.txt") {
			t.Fatal("/robots.txt disallowed")
		}
		// A path and its normal form get the same answer.
		if r.Allowed("bot", normalize(path)) != a && path != "" {
			t.Fatalf("normal form %q of %q answered differently", normalize(path), path)
		}
	})
}

func BenchmarkAllowed(b *testing.B) {
	r := Parse([]byte("user-agent: *\ndisallow: /private\ndisallow: /*.php$\nallow: /private/public\ndisallow: /a*b*c\n"))
	g := r.Group("bot")
	paths := []string{"/", "/private/x", "/private/public/y", "/index.php", "/a/long/path/with/b/and/c", "/%7Euser/page.html"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		g.Allowed(paths[i%len(paths)])
	}
}
