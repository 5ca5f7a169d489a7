package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
)

// Error codes: the stable first word of a record's "error" field.
const (
	CodeURL         = "url"       // not an absolute http(s) URL
	CodeTrap        = "trap"      // path too deep or repeating (bot trap)
	CodeBudget      = "budget"    // the host's URL budget is spent
	CodeRobots      = "robots"    // disallowed by robots.txt (or robots.txt unreachable)
	CodeDNS         = "dns"       // the host name does not resolve
	CodeBlocked     = "blocked"   // private/loopback/link-local/multicast address refused
	CodeConnect     = "connect"   // TCP connection refused or unreachable
	CodeTLS         = "tls"       // TLS handshake or certificate failure
	CodeTimeout     = "timeout"   // a connect, read or total timeout
	CodeNetwork     = "network"   // connection reset or closed mid-exchange
	CodeHTTP        = "http"      // a malformed HTTP response
	CodeTooLarge    = "too_large" // body truncated at --max-size, or decoding passed its cap
	CodeDecode      = "decode"    // a Content-Encoding that does not decode
	CodeRedirect    = "redirect"  // bad redirect: no or bad Location, or to a non-http scheme
	CodeLoop        = "redirect_loop"
	CodeRedirects   = "too_many_redirects"
	CodeInterrupted = "interrupted" // not fetched: the run was stopped
	CodeDuplicate   = "duplicate"   // its normal form was already fetched in this run
	CodeType        = "type"        // a content type the policy refuses (--types)
	CodeWARC        = "warc"        // the response came, but its WARC record could not be written
	CodeResting     = "resting"     // not fetched: the host failed too often in a row, or asks for too long a wait (--host-rates)
	CodePinned      = "pinned"      // not fetched: the host is pinned to rate 0 (--pins)
)

// codedError is an error with its code.
type codedError struct {
	code string
	msg  string
}

func (e *codedError) Error() string { return e.code + ": " + e.msg }

func errorf(code, format string, args ...any) *codedError {
	return &codedError{code: code, msg: fmt.Sprintf(format, args...)}
}

// classify turns a transport error into a coded error. timedOut tells
// whether our own timers fired; stopped whether the run is stopping.
func classify(err error, timedOut, stopped bool) *codedError {
	var ce *codedError
	if errors.As(err, &ce) {
		return ce
	}
	msg := err.Error()
	// Strip net/http's `Get "url": ` prefix: the record has the URL.
	if i := strings.Index(msg, `": `); i >= 0 && strings.HasPrefix(msg, "Get ") {
		msg = msg[i+3:]
	}
	var dnsErr *net.DNSError
	var be *blockedError
	var certErr *tls.CertificateVerificationError
	var hostErr x509.HostnameError
	var unkAuth x509.UnknownAuthorityError
	var recErr tls.RecordHeaderError
	var opErr *net.OpError
	var ne net.Error
	switch {
	case stopped:
		return errorf(CodeInterrupted, "the run was stopped")
	case errors.As(err, &be):
		return errorf(CodeBlocked, "%s", be.Error())
	case errors.As(err, &dnsErr):
		return errorf(CodeDNS, "%s", dnsErr.Error())
	case timedOut, errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return errorf(CodeTimeout, "%s", msg)
	case errors.As(err, &certErr), errors.As(err, &hostErr), errors.As(err, &unkAuth), errors.As(err, &recErr),
		strings.Contains(msg, "tls: "):
		return errorf(CodeTLS, "%s", msg)
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return errorf(CodeConnect, "%s", msg)
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return errorf(CodeConnect, "%s", msg)
	case protocolError(msg):
		// Before the network cases: net/http wraps some of these around
		// the EOF of the connection it then closed.
		return errorf(CodeHTTP, "%s", msg)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.EPIPE), strings.Contains(msg, "server closed"):
		return errorf(CodeNetwork, "%s", msg)
	default:
		return errorf(CodeNetwork, "%s", msg)
	}
}

// protocolError reports whether a transport error message is a server's
// breach of HTTP, which trying again would only repeat: a malformed status
// line or header, a header past the size limit, a bad or doubled
// Content-Length, an unknown transfer coding, an HTTP/2 protocol error.
func protocolError(msg string) bool {
	for _, s := range []string{
		"malformed HTTP", "malformed MIME", "invalid", "headers exceeded", "header exceeded",
		"bad Content-Length", "multiple Content-Length", "transfer encoding", "unsupported transfer",
		"PROTOCOL_ERROR", "FRAME_SIZE_ERROR", "COMPRESSION_ERROR",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// retryable reports whether an exchange that failed with code may be tried
// again.
func retryable(code string) bool {
	switch code {
	case CodeTimeout, CodeNetwork, CodeConnect:
		return true
	}
	return false
}
