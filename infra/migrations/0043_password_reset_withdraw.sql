-- A reset token whose email SES did not take is withdrawn (deleted) before the request goes back
-- to its queue (warble.domain.passwords.service.mail_reset, issue 40 fault 8): a token nobody
-- received must not count towards the cap of 3 an hour, or an SES outage spanning three tries
-- would leave the redelivery nothing to send.
-- depends: 0011_roles 0030_password_resets

GRANT DELETE ON password_resets TO warble_accounts;
