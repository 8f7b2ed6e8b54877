package keys

import (
	"strings"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// The prefixes and partitions of readers' accounts, sign-in requests,
// sessions and the mail outbox (storage/signin.go, storage/sessions.go,
// storage/mail.go). Accounts and sessions are the platform's: a reader
// signs in once for every publication.
const (
	PrefixAccount      = "ACCOUNT#"
	PrefixAccountEmail = "ACCOUNTEMAIL#"
	PrefixSession      = "SESSION#"
	PrefixSignIn       = "SIGNIN#"
	PrefixSignInCode   = "SIGNINCODE#"
	PrefixSignInRate   = "SIGNINRATE#"
	PrefixMail         = "MAIL#"

	// MailPartition holds every email of the outbox, newest last.
	MailPartition = "MAILBOX"
	// MailQueuePartition is the GSI1 partition of the emails waiting to
	// be sent, by the time of their next attempt.
	MailQueuePartition = "MAILQ"
	// MailUrgentPartition is MailQueuePartition's lane of the emails a
	// reader waits for (sign-in), which no bulk sending delays.
	MailUrgentPartition = "MAILQ#URGENT"
	// PrefixMailTo starts the GSI1 partition of the emails sent or
	// failed to one address (MailToPartition).
	PrefixMailTo = "MAILTO#"
)

// MailToPartition is the GSI1 partition of the emails sent or failed to
// the address email (in lower case), by creation time: what deleting the
// address's account finds of them in one Query.
func MailToPartition(email string) string { return PrefixMailTo + strings.ToLower(email) }

// Account is a reader's platform account.
func Account(id string) dynamo.Key {
	return dynamo.Key{PK: PrefixAccount + id, SK: PrefixAccount + id}
}

// AccountEmail is the reservation of an email address by the account
// that has it (email normalised: lower case).
func AccountEmail(email string) dynamo.Key {
	return dynamo.Key{PK: PrefixAccountEmail + email, SK: PrefixAccountEmail + email}
}

// Session is a session of an account: in the account's partition, so its
// sessions are one Query.
func Session(accountID, sessionID string) dynamo.Key {
	return dynamo.Key{PK: PrefixAccount + accountID, SK: PrefixSession + sessionID}
}

// SignIn is a pending sign-in request, by the hash of its link's token.
func SignIn(tokenHash string) dynamo.Key {
	return dynamo.Key{PK: PrefixSignIn + tokenHash, SK: PrefixSignIn + tokenHash}
}

// SignInCodePartition is the GSI1 partition of the pending sign-in
// requests to an email address, where a code is looked up.
func SignInCodePartition(email string) string { return PrefixSignInCode + email }

// SignInEmailRate counts the sign-in emails sent to one address.
func SignInEmailRate(email string) dynamo.Key {
	return dynamo.Key{PK: PrefixSignInRate + "EMAIL#" + email, SK: PrefixSignInRate + "EMAIL#" + email}
}

// SignInClientRate counts the addresses one client sent sign-in emails
// to.
func SignInClientRate(client string) dynamo.Key {
	return dynamo.Key{PK: PrefixSignInRate + "CLIENT#" + client, SK: PrefixSignInRate + "CLIENT#" + client}
}

// Mail is an email of the outbox, in MailPartition by creation time.
func Mail(createdAt, id string) dynamo.Key {
	return dynamo.Key{PK: MailPartition, SK: PrefixMail + createdAt + "#" + id}
}
