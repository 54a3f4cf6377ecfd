// Symbian-specific file.

extern "C" {

int winscw_data_end;

} /* extern "C" */
