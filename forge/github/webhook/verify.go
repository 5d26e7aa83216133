// Package webhook receives GitHub's webhook deliveries for agenttree: it
// checks each delivery's X-Hub-Signature-256 against the secret, refuses
// what is unsigned, badly signed, too large or not a POST, and turns the
// events that matter for a pull request into forge.Changes. A change only
// says "look again now" (docs/ARCHITECTURE.md §6), so the receiver
// decodes no more of a payload than the PR and commit it names.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
)

// Errors of Verify, for errors.Is.
var (
	// ErrUnsigned: the delivery carries no X-Hub-Signature-256.
	ErrUnsigned = errors.New("unsigned delivery")
	// ErrBadSignature: the signature is not of the body under any secret
	// the receiver holds, or not in GitHub's sha256=HEX form.
	ErrBadSignature = errors.New("bad signature")
)

// signaturePrefix is the only algorithm accepted: GitHub's older
// X-Hub-Signature (sha1) is not.
const signaturePrefix = "sha256="

// Sign is the X-Hub-Signature-256 value GitHub sends for body under
// secret.
func Sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return signaturePrefix + hex.EncodeToString(mac.Sum(nil))
}

// Verify checks signature, the X-Hub-Signature-256 header, against body
// under each of secrets, in constant time for each.
func Verify(secrets [][]byte, body []byte, signature string) error {
	if signature == "" {
		return ErrUnsigned
	}
	hexSum, ok := strings.CutPrefix(signature, signaturePrefix)
	if !ok {
		return ErrBadSignature
	}
	got, err := hex.DecodeString(hexSum)
	if err != nil || len(got) != sha256.Size {
		return ErrBadSignature
	}
	for _, s := range secrets {
		if len(s) == 0 {
			continue
		}
		mac := hmac.New(sha256.New, s)
		mac.Write(body)
		if hmac.Equal(got, mac.Sum(nil)) {
			return nil
		}
	}
	return ErrBadSignature
}
