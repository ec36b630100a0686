"""`python -m passhat.sandbox --domain D --database F`: serve a domain's tools over stdio (what stdio trials spawn)."""

from passhat.sandbox.trial import main

main()
