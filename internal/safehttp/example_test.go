package safehttp_test

import (
	"errors"
	"fmt"

	"github.com/otter-sh/otter/internal/safehttp"
)

func ExamplePolicy_CheckURL() {
	policy, err := safehttp.NewPolicy([]string{"10.1.2.0/24"}) // [tools] allow_private_networks
	if err != nil {
		panic(err)
	}
	for _, u := range []string{
		"https://example.com/",
		"http://10.1.2.3/dashboard",
		"http://0x7f000001/",
		"http://[::ffff:169.254.169.254]/latest/meta-data/",
		"file:///etc/passwd",
	} {
		_, err := policy.CheckURL(u)
		switch {
		case err == nil:
			fmt.Println("ok     ", u)
		case errors.Is(err, safehttp.ErrBlocked):
			fmt.Println("blocked", u)
		case errors.Is(err, safehttp.ErrInvalidURL):
			fmt.Println("invalid", u)
		}
	}
	// Output:
	// ok      https://example.com/
	// ok      http://10.1.2.3/dashboard
	// invalid http://0x7f000001/
	// blocked http://[::ffff:169.254.169.254]/latest/meta-data/
	// invalid file:///etc/passwd
}
