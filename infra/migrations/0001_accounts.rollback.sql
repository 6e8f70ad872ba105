-- depends:
DROP TABLE sessions;
DROP TABLE users;
