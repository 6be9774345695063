use matrix::Matrix;

#[test]
fn multiply_by_identity() {
    let m = Matrix::from_rows(&[&[1.0, 2.0], &[3.0, 4.0]]);
    assert_eq!(&m * &Matrix::identity(2), m);
}

#[test]
fn add() {
    let m = Matrix::from_rows(&[&[1.0, 2.0]]);
    assert_eq!(&m + &m, Matrix::from_rows(&[&[2.0, 4.0]]));
}

#[test]
fn transpose_swaps_rows_and_columns() {
    let m = Matrix::from_rows(&[&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]]);
    let t = m.transpose();
    assert_eq!(t.shape(), (3, 2));
    assert_eq!(
        t,
        Matrix::from_rows(&[&[1.0, 4.0], &[2.0, 5.0], &[3.0, 6.0]])
    );
    assert_eq!(t.transpose(), m);
}

#[test]
fn transpose_of_product() {
    let a = Matrix::from_rows(&[&[1.0, 2.0], &[0.0, 1.0], &[3.0, -1.0]]);
    let b = Matrix::from_rows(&[&[2.0, 0.0, 1.0], &[1.0, 1.0, 0.0]]);
    assert_eq!((&a * &b).transpose(), &b.transpose() * &a.transpose());
}

#[test]
fn transpose_of_empty() {
    assert_eq!(Matrix::zeros(0, 3).transpose().shape(), (3, 0));
}
