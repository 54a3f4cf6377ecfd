// Symbian-specific file.

extern "C" {

int winscw_data_start;

} /* extern "C" */
