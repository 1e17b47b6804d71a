/* shlib_main.c - calls shlib.c's library and never malloc itself. */
void shlib_work(int n);

int main(void)
{
	shlib_work(100);
	return 0;
}
