DROP TABLE reports;
DROP FUNCTION report_cases_forget();
DROP TABLE report_cases;
