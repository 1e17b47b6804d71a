/* ctor_main.c - links ctorlib.c's library; its constructor has allocated. */
extern void *volatile ctorlib_keep;

int main(void)
{
	return ctorlib_keep == 0;
}
