-- The roles stay (other databases of the cluster may use them); this database's grants go.
REVOKE ALL ON users, sessions FROM warble_reader, warble_accounts, warble_operator;
REVOKE USAGE ON SCHEMA public FROM warble_reader, warble_accounts, warble_operator;
