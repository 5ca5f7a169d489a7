package fetch

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/warc"
)

// selfSigned writes a self-signed certificate for ip and its key into dir
// and returns their paths.
func selfSigned(t *testing.T, dir, ip string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: ip},
		IPAddresses:           []net.IP{net.ParseIP(ip)},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestHTTP2 fetches from nginx serving HTTP/2 over TLS on loopback (ALPN
// offers h2) with a certificate trusted through CAFile: the exchanges must
// be HTTP/2, as nginx's access log records them.
func TestHTTP2(t *testing.T) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		bin = "/usr/sbin/nginx"
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("nginx (installed by scripts/deps.sh): %v", err)
	}
	const ip = "127.0.0.81"
	dir := t.TempDir()
	cert, key := selfSigned(t, dir, ip)
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	root := filepath.Join(dir, "www")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "index.html"), []byte(`<title>h2</title><a href="/a.html">a</a>`), 0o644)
	os.WriteFile(filepath.Join(root, "a.html"), []byte(`<title>a</title>`), 0o644)
	userLine := ""
	if u, err := user.Current(); err == nil && u.Uid == "0" {
		// As root, nginx's workers would run as nobody, who may not read
		// the test's directory.
		g, _ := user.LookupGroupId(u.Gid)
		if g != nil {
			userLine = fmt.Sprintf("user %s %s;", u.Username, g.Name)
		}
	}
	accessLog := filepath.Join(dir, "access.log")
	// nginx 1.22 (Debian 12) takes http2 on the listen line; "http2 on;"
	// is 1.25's spelling.
	conf := fmt.Sprintf(`%s
worker_processes 1;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log warn;
events { worker_connections 64; }
http {
  log_format proto '$server_protocol $request_uri $status';
  access_log %[3]s proto;
  client_body_temp_path %[2]s/tmp;
  proxy_temp_path %[2]s/tmp;
  fastcgi_temp_path %[2]s/tmp;
  uwsgi_temp_path %[2]s/tmp;
  scgi_temp_path %[2]s/tmp;
  types { text/html html; }
  server {
    listen %[4]s:%[5]d ssl http2;
    ssl_certificate %[6]s;
    ssl_certificate_key %[7]s;
    root %[8]s;
  }
}
`, userLine, dir, accessLog, ip, port, cert, key, root)
	confFile := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "tmp"), 0o755)
	cmd := exec.Command(bin, "-c", confFile, "-g", "daemon off;", "-e", filepath.Join(dir, "error.log"))
	// A file, not a pipe: Wait would wait for the workers to close it.
	outFile, err := os.Create(filepath.Join(dir, "nginx.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer outFile.Close()
	cmd.Stdout, cmd.Stderr = outFile, outFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// SIGTERM: the master stops its workers too (a kill would orphan them).
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	up := false
	for i := 0; i < 100 && !up; i++ {
		if c, err := net.Dial("tcp", net.JoinHostPort(ip, fmt.Sprint(port))); err == nil {
			c.Close()
			up = true
		} else {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if !up {
		errs, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		nout, _ := os.ReadFile(filepath.Join(dir, "nginx.out"))
		t.Fatalf("nginx did not start: %s %s", nout, errs)
	}

	w, err := warc.Create(warc.Options{Dir: filepath.Join(dir, "warc")})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.CAFile = cert
	cfg.WARC = w
	base := fmt.Sprintf("https://%s:%d", ip, port)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := fetchAll(ctx, cfg, []string{base + "/", base + "/a.html"})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{base + "/", base + "/a.html"} {
		if r := out[u].rec; num(r, "status") != 200 {
			t.Fatalf("%s: %s", u, r.AppendJSON(nil))
		}
	}
	w.Close()
	// The WARC says what was spoken: every request and response record
	// names h2 and the TLS version in WARC-Protocol fields, and the
	// response is in HTTP/1.1 form without a reason phrase, which HTTP/2
	// does not carry (IIPC, WARC Extensions for HTTP/2).
	for _, r := range warcRecords(t, w.Files()) {
		if r.Type() != warc.TypeResponse && r.Type() != warc.TypeRequest {
			continue
		}
		if got := protocolsOf(r); len(got) != 2 || got[0] != "h2" || (got[1] != "tls/1.3" && got[1] != "tls/1.2") {
			t.Errorf("%s %s: WARC-Protocol %q, want h2 and the TLS version", r.Type(), r.TargetURI(), got)
		}
		if r.Type() == warc.TypeResponse {
			want := "HTTP/1.1 200 "
			if strings.HasSuffix(r.TargetURI(), "/robots.txt") {
				want = "HTTP/1.1 404 " // nginx has none
			}
			if line := firstLine(t, r); line != want {
				t.Errorf("%s: status line %q, want %q", r.TargetURI(), line, want)
			}
		}
	}
	// nginx writes a request's log line after its response has gone out,
	// so the last line may come a moment after fetch has its page.
	var lines []string
	for wait := 0; wait < 100; wait++ {
		logData, err := os.ReadFile(accessLog)
		if err != nil {
			t.Fatal(err)
		}
		if lines = strings.Split(strings.TrimSpace(string(logData)), "\n"); len(lines) >= 3 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(lines) != 3 { // robots.txt and the two pages
		t.Fatalf("access log: %q", lines)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "HTTP/2.0 ") {
			t.Errorf("not HTTP/2: %q", l)
		}
	}
}

// protocolsOf returns a record's WARC-Protocol values in order.
func protocolsOf(r *warc.Record) []string {
	var ps []string
	for _, f := range r.Header {
		if strings.EqualFold(f.Name, "WARC-Protocol") {
			ps = append(ps, f.Value)
		}
	}
	return ps
}

// firstLine returns the first line of a record's block (read again after).
func firstLine(t *testing.T, r *warc.Record) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	r.Body = bytes.NewReader(b)
	line, _, _ := strings.Cut(string(b), "\r\n")
	return line
}
